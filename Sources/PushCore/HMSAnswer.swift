/// Push Kit's answer body, the parts an answer rule reads: `{"code":"80000000","msg":"Success","requestId":"…"}`
/// (developer.huawei.com, "Sending Downlink Messages", response parameters). `code` is Push Kit's own result code,
/// `msg` its description — for `80100000` (partial success) the JSON *text* `{"success":N,"failure":M,
/// "illegal_tokens":[…]}` naming the tokens that failed. Parsing is lenient: a body that is not Push Kit's (a proxy's
/// HTML 502, the 503 of flow control) leaves every part nil, and the rule falls back to the HTTP status.
public struct HMSAnswer: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// `code`.
    public var code: String?
    /// `msg`, as Push Kit wrote it.
    public var message: String?
    /// `requestId`.
    public var requestId: String?
    /// The tokens a partial success names as failed (`msg`'s `illegal_tokens`), in order.
    public var illegalTokens: [String]
    /// The `Retry-After` header, in ms, if any.
    public var retryAfterMs: Int64?

    /// Creates an answer from its parts.
    public init(
        status: Int, code: String? = nil, message: String? = nil, requestId: String? = nil, illegalTokens: [String] = [],
        retryAfterMs: Int64? = nil
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
        if let message, message.hasPrefix("{"), let inner = try? JSONValue(parsing: Array(message.utf8)) {
            let list = inner["illegal_tokens"] ?? inner["illegalTokens"]
            illegalTokens = list?.arrayValue?.compactMap(\.stringValue) ?? []
        }
    }
}
