import Crypto
import PushCore

/// The RFC 8030 headers of one Web Push message, derived from the notification the engine prepared (a pure
/// function of its expiration, priority and collapse id, and the time):
/// - `TTL` (required): the seconds until `expiration` (0 when it has passed; APNs' 0, "deliver now or never", is 0
///   too); without an expiration, ``defaultTTL`` (28 days).
/// - `Urgency`: priority 10 → `high`, 5 → `normal`, 1 → `low`.
/// - `Topic`: the collapse id when it is at most 32 base64url characters (RFC 8030 §5.4), else one derived from it
///   (``derivedTopic(_:)``), so a notification that replaces an earlier one keeps doing so. A broadcast's default
///   collapse id is its job id, which is usually longer: it is derived, the same for every device of the job.
public struct WebPushHeaders: Sendable, Equatable {
    /// 28 days: the longest TTL FCM accepts, what the simulator keeps at most, and the longest APNs-style "store
    /// until delivered" we can ask of every push service (a longer one is cut by the service anyway).
    public static let defaultTTL: Int64 = 2_419_200

    /// `TTL`, seconds.
    public var ttl: Int64
    /// `Urgency`.
    public var urgency: String
    /// `Topic`, if the notification has a collapse id.
    public var topic: String?

    /// The headers for a notification at `nowMs`.
    public init(expiration: Int64?, priority: PushPriority, collapseId: String?, nowMs: Int64) {
        self.init(expiration: expiration, priority: priority, topic: collapseId.map(Self.topic(for:)), nowMs: nowMs)
    }

    /// The same with the collapse id's `Topic` already made (``topic(for:)``): the sender derives it once per
    /// collapse id, not once per message.
    public init(expiration: Int64?, priority: PushPriority, topic: String?, nowMs: Int64) {
        if let expiration {
            ttl = FCMPayload.secondsLeft(until: expiration, nowMs: nowMs)
        } else {
            ttl = Self.defaultTTL
        }
        urgency = switch priority {
        case .immediate: "high"
        case .conserve: "normal"
        case .low: "low"
        }
        self.topic = topic
    }

    /// The collapse id itself when it is a valid topic, else ``derivedTopic(_:)``.
    public static func topic(for collapseId: String) -> String {
        let valid = !collapseId.isEmpty && collapseId.utf8.count <= 32 && collapseId.utf8.allSatisfy(Base64URL.isAlphabet)
        return valid ? collapseId : derivedTopic(collapseId)
    }

    /// base64url of the first 24 bytes of SHA-256 of the collapse id: 32 characters, stable for one collapse id.
    public static func derivedTopic(_ collapseId: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(collapseId.utf8)).prefix(24)))
    }

    /// The header lines, with the VAPID `authorization`.
    public func lines(authorization: String) -> [String] {
        var lines = ["TTL: \(ttl)", "Urgency: \(urgency)"]
        if let topic { lines.append("Topic: \(topic)") }
        lines += [
            "Content-Encoding: aes128gcm", "Content-Type: application/octet-stream", "Authorization: \(authorization)", "Expect:",
        ]
        return lines
    }
}
