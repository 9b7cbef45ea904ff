import PushCore

/// A message the simulator's Huawei Push Kit endpoint accepted (`POST /v1/{clientId}/messages:send`), one per token it
/// was delivered to: a send to three tokens of which one is invalid makes two.
public struct ReceivedHMSMessage: Sendable, Equatable {
    /// The client id (Huawei's app id) of the URL.
    public var clientId: String
    /// The token delivered to; nil for a topic or condition message.
    public var token: String?
    /// `message.topic`, when sent to a topic.
    public var topic: String?
    /// `message.condition`, when sent to a condition.
    public var condition: String?
    /// The `message` object as received, without `token` (the device's own copy does not list the others).
    public var message: JSONValue
    /// The answer's `requestId` (the same for every token of one request).
    public var requestId: String
    /// When it was accepted, in ms since 1970.
    public var receivedAtMs: Int64

    /// Creates a record.
    public init(
        clientId: String, token: String?, topic: String? = nil, condition: String? = nil, message: JSONValue,
        requestId: String, receivedAtMs: Int64
    ) {
        self.clientId = clientId
        self.token = token
        self.topic = topic
        self.condition = condition
        self.message = message
        self.requestId = requestId
        self.receivedAtMs = receivedAtMs
    }

    /// The record as one compact JSON object (a `--record` file line, beside the other services'):
    /// `{"service":"hms","clientId","token","topic","condition","requestId","receivedAt","message"}` — `message` the
    /// `message` object as received, without `token`.
    public func jsonLine(into out: inout [UInt8]) {
        let line = JSONValue.object([
            ("service", .string("hms")), ("clientId", .string(clientId)),
            ("token", token.map(JSONValue.string) ?? .null),
            ("topic", topic.map(JSONValue.string) ?? .null), ("condition", condition.map(JSONValue.string) ?? .null),
            ("requestId", .string(requestId)), ("receivedAt", .int(receivedAtMs)), ("message", message),
        ])
        line.encode(into: &out)
    }
}
