import Foundation
import PushCore

/// One push message the simulator's Web Push service accepted (answered 201), decrypted.
public struct ReceivedWebPush: Sendable, Equatable {
    /// The subscription's id (the last path segment of its endpoint).
    public var subscriptionId: String
    /// The decrypted message without its padding (empty for a push without a body).
    public var plaintext: [UInt8]
    /// The `TTL` header, in seconds.
    public var ttl: Int
    /// The `Urgency` header, nil when absent (RFC 8030: normal).
    public var urgency: String?
    /// The `Topic` header, nil when absent.
    public var topic: String?
    /// The VAPID JWT's `sub`.
    public var subject: String
    /// The VAPID public key `k`, base64url.
    public var vapidKey: String
    /// The id of the push message resource the answer's `Location` names.
    public var messageId: String
    /// When it was accepted, in ms since 1970 (the configured clock).
    public var receivedAtMs: Int64

    /// The plaintext as UTF-8 text, nil when it is not valid UTF-8.
    public var text: String? { String(validating: plaintext, as: UTF8.self) }

    /// The record as one compact JSON object (a `--record` file line, beside the APNs lines):
    /// `{"service":"webpush","subscription","ttl","urgency","topic","subject","vapidKey","messageId","receivedAt",
    /// "plaintext","plaintextBase64"}` — `plaintext` is the text (null when not UTF-8), `plaintextBase64` the exact
    /// bytes (base64url).
    public func jsonLine(into out: inout [UInt8]) {
        func field(_ key: String, _ value: JSONValue, last: Bool = false) {
            JSONValue.string(key).encode(into: &out)
            out.append(UInt8(ascii: ":"))
            value.encode(into: &out)
            if !last { out.append(UInt8(ascii: ",")) }
        }
        func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        out.append(UInt8(ascii: "{"))
        field("service", .string("webpush"))
        field("subscription", .string(subscriptionId))
        field("ttl", .int(Int64(ttl)))
        field("urgency", optional(urgency))
        field("topic", optional(topic))
        field("subject", .string(subject))
        field("vapidKey", .string(vapidKey))
        field("messageId", .string(messageId))
        field("receivedAt", .int(receivedAtMs))
        field("plaintext", optional(text))
        field("plaintextBase64", .string(StrictBase64URL.encode(plaintext)), last: true)
        out.append(UInt8(ascii: "}"))
    }
}
