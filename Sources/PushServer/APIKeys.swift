import Crypto
import PushCore

/// What an API key may do.
public enum APIKeyKind: String, Sendable, CaseIterable {
    /// Register and unregister device tokens (safe to ship inside an app).
    case registration
    /// Everything a registration key may do, plus count and send (keep it on servers).
    case send
}

/// The configured API keys, by SHA-256 hash; keys themselves are never stored.
public struct APIKeys: Sendable {
    /// A key's app and kind.
    public struct Grant: Sendable, Equatable {
        /// The app the key belongs to.
        public let app: String
        /// What it may do.
        public let kind: APIKeyKind
    }

    private var grants: [String: Grant] = [:]

    /// Collects the `sha256:` hashes of every app's keys.
    public init(apps: [String: AppSettings]) {
        for (app, settings) in apps {
            for hash in settings.registrationKeys { grants[hash] = Grant(app: app, kind: .registration) }
            for hash in settings.sendKeys { grants[hash] = Grant(app: app, kind: .send) }
        }
    }

    /// Adds a key (e.g. the ephemeral development key for a simulator app).
    public mutating func add(key: String, app: String, kind: APIKeyKind) {
        grants[Self.hash(key)] = Grant(app: app, kind: kind)
    }

    /// True when `app` has at least one key.
    public func hasKeys(for app: String) -> Bool { grants.values.contains { $0.app == app } }

    /// The grant for a presented key, or nil.
    public func grant(for key: String) -> Grant? { grants[Self.hash(key)] }

    /// The grant for a key's ``hash(_:)``, or nil.
    public func grant(forHash hash: String) -> Grant? { grants[hash] }

    /// `sha256:` + lowercase hex SHA-256 of the key string exactly as sent in the header.
    public static func hash(_ key: String) -> String {
        let digest = SHA256.hash(data: Array(key.utf8))
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = Array("sha256:".utf8)
        out.reserveCapacity(71)
        for byte in digest {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A new random key: 32 bytes from the system's secure generator, base64url without padding.
    public static func generate() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Base64URL.encode(bytes)
    }
}

/// Base64url without padding (RFC 4648 §5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        if bytes.count - i == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if bytes.count - i == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
