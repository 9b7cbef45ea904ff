import PushCore

/// A page request over the delivery log (`pushctl deliveries`, `GET /v1/apps/{app}/deliveries`): one app's
/// rows, optionally of one token, one broadcast or send job, finished at or after a time, of one outcome kind;
/// newest first (by finish time, then insertion), `limit` at a time, after ``after`` (the previous page's
/// ``DeliveryPage/next``).
public struct DeliveryQuery: Sendable, Equatable {
    /// The page size when none is given.
    public static let defaultLimit = 100
    /// The largest page size.
    public static let maxLimit = 1000
    /// The outcome kinds the delivery log holds (pending markers are never logged).
    public static let kinds: [DeliveryOutcome.Kind] = [.accepted, .tokenDead, .rejected, .deferred]

    /// The app.
    public var app: String
    /// Only this device.
    public var token: DeviceToken?
    /// Only this broadcast or send job.
    public var broadcastId: String?
    /// Only rows finished at or after this time (ms since 1970).
    public var sinceMs: Int64?
    /// Only this outcome kind.
    public var kind: DeliveryOutcome.Kind?
    /// Rows per page (1…``maxLimit``).
    public var limit: Int
    /// Continue after this position (the previous page's ``DeliveryPage/next``).
    public var after: DeliveryCursor?

    /// Creates a query; `limit` is clamped to 1…``maxLimit``.
    public init(
        app: String, token: DeviceToken? = nil, broadcastId: String? = nil, sinceMs: Int64? = nil,
        kind: DeliveryOutcome.Kind? = nil, limit: Int = DeliveryQuery.defaultLimit, after: DeliveryCursor? = nil
    ) {
        self.app = app
        self.token = token
        self.broadcastId = broadcastId
        self.sinceMs = sinceMs
        self.kind = kind
        self.limit = min(max(1, limit), Self.maxLimit)
        self.after = after
    }

    /// The SQL expression (valid on SQLite and PostgreSQL) for a row's kind: the stored one, or for rows written
    /// before kinds were stored the kind ``APNsAnswerRule`` gives their status and reason (see ``AnswerSQL``).
    static let kindExpression = AnswerSQL.historyKind(kind: "kind", status: "status", reason: "reason")
}
