/// One notification for one device, ready for the wire: the payload bytes plus every APNs header.
public struct NotificationRequest: Sendable, Equatable {
    /// The destination device.
    public var token: DeviceToken
    /// `apns-topic`: the bundle id with the suffix the push type needs, or empty: then the APNs sender sets its app's
    /// (the delivery engine, which knows no service, leaves it empty).
    public var topic: String
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-priority`.
    public var priority: PushPriority
    /// `apns-expiration` in epoch seconds; 0 means deliver once and do not store. Nil omits the header.
    public var expiration: Int64?
    /// `apns-collapse-id` (at most 64 bytes of UTF-8).
    public var collapseId: String?
    /// `apns-id`: a canonical lowercase UUID, reused on every retry of this notification.
    public var notificationId: String
    /// The compact JSON payload.
    public var payload: [UInt8]

    /// Creates a request. Validation happens in ``NotificationOptions`` and the payload builder.
    public init(
        token: DeviceToken, topic: String, pushType: PushType, priority: PushPriority,
        expiration: Int64? = nil, collapseId: String? = nil, notificationId: String, payload: [UInt8]
    ) {
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.notificationId = notificationId
        self.payload = payload
    }

    /// The request path: `/3/device/<token>`.
    public var path: String { "/3/device/" + token.hex }

    /// The APNs request headers in a stable order (lowercase names, as HTTP/2 requires).
    public var headers: [(name: String, value: String)] {
        var h: [(String, String)] = [
            ("apns-id", notificationId),
            ("apns-push-type", pushType.rawValue),
            ("apns-priority", String(priority.rawValue)),
            ("apns-topic", topic),
        ]
        if let expiration { h.append(("apns-expiration", String(expiration))) }
        if let collapseId { h.append(("apns-collapse-id", collapseId)) }
        return h.map { (name: $0.0, value: $0.1) }
    }

    public static func == (lhs: NotificationRequest, rhs: NotificationRequest) -> Bool {
        lhs.token == rhs.token && lhs.topic == rhs.topic && lhs.pushType == rhs.pushType
            && lhs.priority == rhs.priority && lhs.expiration == rhs.expiration
            && lhs.collapseId == rhs.collapseId && lhs.notificationId == rhs.notificationId && lhs.payload == rhs.payload
    }
}

/// Canonical lowercase UUIDs for `apns-id`, without Foundation.
public enum NotificationID {
    /// A random version-4 UUID in lowercase, using the system's secure generator.
    public static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        return random(using: &rng)
    }

    /// A version-4 UUID from `rng` (tests pass a seeded generator).
    public static func random<R: RandomNumberGenerator>(using rng: inout R) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        return format(bytes)
    }

    /// True for a UUID in the 8-4-4-4-12 hex form (any case), as APNs requires for `apns-id`.
    public static func isValid(_ text: String) -> Bool {
        let u = Array(text.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != UInt8(ascii: "-") { return false }
            } else if !((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)) {
                return false
            }
        }
        return true
    }

    static func format(_ b: [UInt8]) -> String {
        b.withUnsafeBufferPointer { format($0) }
    }

    /// The canonical 8-4-4-4-12 lowercase form of 16 bytes, written straight into the string's storage.
    static func format(_ b: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: b.count * 2 + 4) { out in
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            var n = 0
            for (i, byte) in b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[n] = UInt8(ascii: "-")
                    n += 1
                }
                out[n] = digits[Int(byte >> 4)]
                out[n + 1] = digits[Int(byte & 0xf)]
                n += 2
            }
            return n
        }
    }
}
