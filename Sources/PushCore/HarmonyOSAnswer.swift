/// Push Kit's scenario-API answer, the parts an answer rule reads: `{"code":"80000000","msg":"Success",
/// "requestId":"…"}` (Huawei's REST API reference, "Response Parameters"). For `80100000` (some tokens failed) and
/// `80300007` (all tokens invalid) `msg` is the JSON *text* `{"illegalTokens":{"tokenFormatError":["…"]},
/// "success":N,"failure":M}`: the failed tokens grouped by reason (`noRight`, `tokenFormatError`, `noPushTypeRight`,
/// …). Parsing is lenient: a body that is not Push Kit's (a proxy's HTML 502, the 503 of flow control) leaves every
/// part nil, and the rule falls back to the HTTP status.
public struct HarmonyOSAnswer: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// `code`.
    public var code: String?
    /// `msg`, as Push Kit wrote it.
    public var message: String?
    /// `requestId`.
    public var requestId: String?
    /// The failed tokens by reason (`msg`'s `illegalTokens`).
    public var illegalTokens: [String: [String]]
    /// The `Retry-After` header, in ms, if any.
    public var retryAfterMs: Int64?

    /// Creates an answer from its parts.
    public init(
        status: Int, code: String? = nil, message: String? = nil, requestId: String? = nil,
        illegalTokens: [String: [String]] = [:], retryAfterMs: Int64? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.requestId = requestId
        self.illegalTokens = illegalTokens
        self.retryAfterMs = retryAfterMs
    }

    /// Parses a response body.
    public init(status: Int, body: some Collection<UInt8>, retryAfterMs: Int64? = nil) {
        self.init(status: status, retryAfterMs: retryAfterMs)
        guard let root = try? JSONValue(parsing: body) else { return }
        code = root["code"]?.stringValue ?? root["code"]?.intValue.map { String($0) }
        message = root["msg"]?.stringValue
        requestId = root["requestId"]?.stringValue
        if let message, message.hasPrefix("{"), let inner = try? JSONValue(parsing: Array(message.utf8)),
            let groups = inner["illegalTokens"]?.objectPairs
        {
            for (reason, list) in groups {
                illegalTokens[reason, default: []] += list.arrayValue?.compactMap(\.stringValue) ?? []
            }
        }
    }

    /// The reason Push Kit named `token` under, if it named it.
    public func illegalReason(of token: String) -> String? {
        illegalTokens.first { $0.value.contains(token) }?.key
    }
}
