import PushCore

/// One push message the simulator's UnifiedPush distributor accepted (answered 201), decrypted: what the connector
/// library hands the app once it has decrypted the distributor's bytes (AND_3.0.0: RFC 8291 ciphertext).
public struct ReceivedUnifiedPush: Sendable, Equatable {
    /// The endpoint's id (the last path segment of `https://HOST:PORT/up/<id>`).
    public var subscriptionId: String
    /// The decrypted message without its padding (1–3993 bytes: AND_3.0.0).
    public var plaintext: [UInt8]
    /// The `TTL` header in seconds, nil when absent (SERV_1.2.0 does not ask for one).
    public var ttl: Int?
    /// The `Urgency` header, nil when absent.
    public var urgency: String?
    /// The `Topic` header, nil when absent.
    public var topic: String?
    /// The VAPID JWT's `sub`, nil when the push had no `Authorization`.
    public var subject: String?
    /// The VAPID public key `k` (base64url), nil when the push had no `Authorization`.
    public var vapidKey: String?
    /// The id of the push message the answer's `Location` names.
    public var messageId: String
    /// When it was accepted, in ms since 1970 (the configured clock).
    public var receivedAtMs: Int64

    /// The plaintext as UTF-8 text, nil when it is not valid UTF-8.
    public var text: String? { String(validating: plaintext, as: UTF8.self) }

    /// The record as one compact JSON object (a `--record` file line), the Web Push line's keys with `service`
    /// `unifiedpush`: `{"service","subscription","ttl","urgency","topic","subject","vapidKey","messageId","receivedAt",
    /// "plaintext","plaintextBase64"}`; `ttl`, `subject` and `vapidKey` are null when the push had none.
    public func jsonLine(into out: inout [UInt8]) {
        func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        JSONValue.object([
            ("service", .string("unifiedpush")), ("subscription", .string(subscriptionId)),
            ("ttl", ttl.map { .int(Int64($0)) } ?? .null), ("urgency", optional(urgency)), ("topic", optional(topic)),
            ("subject", optional(subject)), ("vapidKey", optional(vapidKey)), ("messageId", .string(messageId)),
            ("receivedAt", .int(receivedAtMs)), ("plaintext", optional(text)),
            ("plaintextBase64", .string(StrictBase64URL.encode(plaintext))),
        ]).encode(into: &out)
    }
}
