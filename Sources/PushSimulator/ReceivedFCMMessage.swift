import PushCore

/// A message the simulator's FCM endpoint accepted (`POST /v1/projects/{project_id}/messages:send`).
public struct ReceivedFCMMessage: Sendable, Equatable {
    /// The project of the URL.
    public var projectId: String
    /// `message.token`, when sent to a device.
    public var token: String?
    /// `message.topic` (without `/topics/`), when sent to a topic.
    public var topic: String?
    /// `message.condition`, when sent to a condition.
    public var condition: String?
    /// The `message` object as received.
    public var message: JSONValue
    /// The message id of the answer's `name` (`projects/{project_id}/messages/{id}`).
    public var messageId: String
    /// When it was accepted, in ms since 1970.
    public var receivedAtMs: Int64

    /// The record as one compact JSON object (a `--record` file line, beside the APNs and Web Push lines):
    /// `{"service":"fcm","project","token","topic","condition","messageId","receivedAt","message"}` — `message` the
    /// `message` object exactly as received.
    public func jsonLine(into out: inout [UInt8]) {
        let line = JSONValue.object([
            ("service", .string("fcm")), ("project", .string(projectId)), ("token", token.map(JSONValue.string) ?? .null),
            ("topic", topic.map(JSONValue.string) ?? .null), ("condition", condition.map(JSONValue.string) ?? .null),
            ("messageId", .string(messageId)), ("receivedAt", .int(receivedAtMs)), ("message", message),
        ])
        line.encode(into: &out)
    }
}
