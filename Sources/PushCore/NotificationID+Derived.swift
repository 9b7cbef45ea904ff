extension NotificationID {
    /// A stable UUID for one device in one broadcast, so a resumed broadcast sends the same `apns-id`
    /// it sent before the interruption without storing an id per device. Two 64-bit FNV-1a hashes with
    /// different seeds give 122 usable bits; ids only need to be unique, not secret.
    public static func derived(broadcast: String, token: DeviceToken) -> String {
        hashed(broadcast, token.hex)
    }

    /// ``derived(broadcast:token:)`` for the devices of one broadcast: the broadcast id's part of the hashes is
    /// taken once, not once per device.
    public struct Derivation: Sendable {
        private let start: TwoFNV

        /// The derivation of broadcast `broadcast`'s ids.
        public init(broadcast: String) {
            var h = TwoFNV()
            h.mix(broadcast)
            h.mix(0)
            start = h
        }

        /// The id of `token` in this broadcast: exactly ``NotificationID/derived(broadcast:token:)``.
        public func id(for token: DeviceToken) -> String {
            var h = start
            h.mix(token.hex)
            return NotificationID.uuid(h)
        }
    }

    /// A version-4-shaped UUID from two FNV-1a-style hashes of `a`, a separator and `b`.
    static func hashed(_ a: String, _ b: String) -> String {
        var h = TwoFNV()
        h.mix(a)
        h.mix(0)
        h.mix(b)
        return uuid(h)
    }

    /// The UUID form of the hashes `h`.
    fileprivate static func uuid(_ h: TwoFNV) -> String {
        let (first, second) = (h.first, h.second)
        // 16 bytes on the stack: a broadcast derives one id per device, so this allocates only the string.
        var bytes: (UInt64, UInt64) = (first.bigEndian, second.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0f) | 0x40
            raw[8] = (raw[8] & 0x3f) | 0x80
            return format(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 16))
        }
    }
}

/// The two hashes ``NotificationID/hashed(_:_:)`` runs side by side. The strings are read as contiguous UTF-8 (`withUTF8`, no copy
/// for a native string): iterating `String.utf8` cost more than the hashing, ~3,000 instructions per device of a
/// broadcast (callgrind). The bytes hashed, and so every derived id, are unchanged: a resumed broadcast must send
/// the ids it sent before.
fileprivate struct TwoFNV: Sendable {
    var first: UInt64 = 0xcbf2_9ce4_8422_2325
    var second: UInt64 = 0x8422_2325_cbf2_9ce4

    @inline(__always) mutating func mix(_ byte: UInt8) {
        first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        second = second &+ (second >> 29)
    }

    mutating func mix(_ string: String) {
        var string = string
        string.withUTF8 { for byte in $0 { mix(byte) } }
    }
}

extension NotificationID {
    /// The default `apns-collapse-id` of a broadcast or send job: its id (ids are at most 64 bytes, APNs'
    /// limit). A device that receives a copy twice (a resend after a crash) replaces the first instead of
    /// showing two.
    public static func collapseId(forJob id: String) -> String {
        if id.utf8.count <= 64 { return id }
        return hashed("collapse-id", id)
    }
}
