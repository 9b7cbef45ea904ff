import Crypto
import Foundation
import PushCore
#if canImport(Glibc)
import Glibc
#endif

/// RFC 8291 message encryption for Web Push, `Content-Encoding: aes128gcm` (RFC 8188): ECDH P-256 between a new
/// ephemeral key and the subscription's `p256dh` and AES-128-GCM over one record with swift-crypto, HKDF-SHA256
/// keyed by its `auth` secret with OpenSSL (``OpenSSLHKDF``: under half swift-crypto's cost on Linux). The body is
/// `salt (16) || rs (4, = 4096) || idlen (1, = 65) || keyid (the ephemeral public key, 65) || record`, where the
/// record is the ciphertext of `plaintext || 0x02 || padding zeros` plus the 16-byte tag, and the whole body is at
/// most ``maximumBodyLength`` (4096) bytes, the size every push service must accept (RFC 8030 §7.2).
public enum WebPushEncryption {
    /// The record size written in the header.
    public static let recordSize: UInt32 = 4096
    /// The longest body sent: RFC 8030 requires push services to accept 4096 bytes of payload.
    public static let maximumBodyLength = 4096
    /// Salt, record size, key id length and the 65-byte key id.
    public static let headerLength = 16 + 4 + 1 + 65
    /// The AES-GCM tag.
    public static let tagLength = 16
    /// The longest plaintext that fits one record of a ≤ 4096-byte body with no padding (4096 − 86 − 1 − 16).
    public static let maximumPlaintextLength = maximumBodyLength - headerLength - 1 - tagLength

    /// Why a notification cannot be encrypted for a subscription.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The field at fault (`keys.p256dh`, `keys.auth`, `payload`).
        public let field: String
        /// One line.
        public let message: String
        public var description: String { message }
    }

    /// A subscription's keys, judged as keys: `p256dh` a point on P-256 (uncompressed) and `auth` 16 bytes. The
    /// registration path calls this (through ``validate(p256dh:auth:)``) so a key that cannot be encrypted to is
    /// refused with a 400 naming it, not found at send time.
    public struct RecipientKeys: Sendable {
        /// The browser's public key. Immutable (swift-crypto's key types are not marked Sendable on Linux).
        public nonisolated(unsafe) let publicKey: P256.KeyAgreement.PublicKey
        /// Its uncompressed form (65 bytes), as it enters the key derivation.
        public let publicKeyBytes: [UInt8]
        /// The authentication secret.
        public let auth: [UInt8]

        /// Judges the raw keys.
        public init(p256dh: [UInt8], auth: [UInt8]) throws(Failure) {
            guard p256dh.count == 65, p256dh.first == 0x04 else {
                throw Failure(field: "keys.p256dh", message: "keys.p256dh must be an uncompressed P-256 public key (65 bytes starting 0x04), not \(p256dh.count) bytes")
            }
            do {
                publicKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
            } catch {
                throw Failure(field: "keys.p256dh", message: "keys.p256dh is not a point on the P-256 curve")
            }
            guard auth.count == 16 else { throw Failure(field: "keys.auth", message: "keys.auth must be 16 bytes, not \(auth.count)") }
            publicKeyBytes = p256dh
            self.auth = auth
        }

        /// The keys of a parsed subscription.
        public init(_ subscription: WebPushSubscription) throws(Failure) {
            try self.init(p256dh: subscription.p256dh, auth: subscription.auth)
        }
    }

    /// Judges a subscription's keys (see ``RecipientKeys``); throws the failure naming the key.
    public static func validate(p256dh: [UInt8], auth: [UInt8]) throws(Failure) {
        _ = try RecipientKeys(p256dh: p256dh, auth: auth)
    }

    /// The `aes128gcm` body for `plaintext`, with a new ephemeral key and a random salt, and `padding` zero bytes
    /// after the delimiter (to hide the plaintext's length). Throws when it does not fit 4096 bytes.
    public static func encrypt(_ plaintext: [UInt8], for keys: RecipientKeys, padding: Int = 0) throws(Failure) -> [UInt8] {
        let (salt, ephemeralKey) = freshSaltAndKey()
        return try encrypt(plaintext, for: keys, padding: padding, ephemeralKey: ephemeralKey, salt: salt)
    }

    /// RFC 8291 §3.4's and RFC 8188 §2.2-2.3's HKDF info strings, NUL-terminated.
    package static let keyInfoLabel = Array("WebPush: info".utf8) + [0]
    package static let cekInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
    package static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]

    /// Bytes one message's randomness takes: the salt (16) and the ephemeral private key's scalar (32).
    package static let randomLength = 16 + 32

    /// A new salt and ephemeral key from one `getrandom(2)` (``saltAndKey(from:)`` of 48 bytes; tried again in the
    /// ~2⁻³² case that the scalar is out of range).
    ///
    /// Not `P256.KeyAgreement.PrivateKey()`: on Linux swift-crypto generates with BoringSSL's
    /// `EC_KEY_generate_key` and then `EC_KEY_check_fips`, a FIPS pair-wise consistency test (it recomputes the
    /// public key and signs and verifies an ECDSA signature: three more P-256 multiplications), and its default
    /// `compactRepresentable: true` draws again whenever the point's y is not the smaller root. Measured by
    /// `pushctl webpush bench-crypto` (bench/RESULTS.md, "Web Push"): 98 µs of CPU per key pair that way (87 with
    /// `compactRepresentable: false`), 11 this way, plus 5.5 for the public key's bytes. The key made here is as
    /// uniform as BoringSSL's own (which also draws candidates until one is in [1, n − 1], FIPS 186-5 A.4.2) and
    /// its public key is computed once, by BoringSSL (`EC_POINT_mul`).
    package static func freshSaltAndKey() -> (salt: [UInt8], key: P256.KeyAgreement.PrivateKey) {
        var bytes = [UInt8](repeating: 0, count: randomLength)
        while true {
            let status = bytes.withUnsafeMutableBytes { getentropy($0.baseAddress, randomLength) }
            precondition(status == 0, "getentropy(2) failed: errno \(errno)")
            if let fresh = saltAndKey(from: bytes) { return fresh }
        }
    }

    /// The salt (the first 16 bytes) and the private key whose scalar is the next 32 (big-endian), or nil when
    /// that scalar is not a valid P-256 private key (0, or not below the group order n).
    package static func saltAndKey(from bytes: [UInt8]) -> (salt: [UInt8], key: P256.KeyAgreement.PrivateKey)? {
        precondition(bytes.count == randomLength, "16 bytes of salt and 32 of scalar")
        guard let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes[16...]) else { return nil }
        return (Array(bytes[..<16]), key)
    }

    /// The content-encryption key (16 bytes) and nonce (12) from the ECDH `secret`, through ``OpenSSLHKDF``.
    package static func contentKeys(
        secret: [UInt8], keys: RecipientKeys, senderPublic: [UInt8], salt: [UInt8]
    ) -> (cek: [UInt8], nonce: [UInt8]) {
        // RFC 8291 §3.4: IKM = HKDF(auth, ecdh_secret, "WebPush: info" || 0x00 || ua_public || as_public, 32).
        let keyInfo = keyInfoLabel + keys.publicKeyBytes + senderPublic
        let ikm = OpenSSLHKDF.derive(.extractAndExpand, key: secret, salt: keys.auth, info: keyInfo, count: 32)
        // RFC 8188 §2.2-2.3: PRK = HKDF-Extract(salt, IKM); CEK and NONCE expanded from it.
        let prk = OpenSSLHKDF.derive(.extractOnly, key: ikm, salt: salt, count: 32)
        return (OpenSSLHKDF.derive(.expandOnly, key: prk, info: cekInfo, count: 16),
                OpenSSLHKDF.derive(.expandOnly, key: prk, info: nonceInfo, count: 12))
    }

    /// The seam the RFC 8291 test vector (and `pushctl webpush bench-crypto`) uses: the same with a given ephemeral
    /// key and salt. Never reuse either.
    package static func encrypt(
        _ plaintext: [UInt8], for keys: RecipientKeys, padding: Int, ephemeralKey: P256.KeyAgreement.PrivateKey, salt: [UInt8]
    ) throws(Failure) -> [UInt8] {
        precondition(salt.count == 16, "the salt is 16 bytes")
        guard padding >= 0, plaintext.count + padding <= maximumPlaintextLength else {
            throw Failure(
                field: "payload",
                message: "the Web Push payload is \(plaintext.count) bytes\(padding > 0 ? " plus \(padding) of padding" : ""); "
                    + "at most \(maximumPlaintextLength) fit one encrypted record of \(maximumBodyLength) bytes")
        }
        let senderPublic = [UInt8](ephemeralKey.publicKey.x963Representation)
        let sharedSecret: SharedSecret
        do {
            sharedSecret = try ephemeralKey.sharedSecretFromKeyAgreement(with: keys.publicKey)
        } catch {
            throw Failure(field: "keys.p256dh", message: "key agreement with keys.p256dh failed: \(error)")
        }
        let (cek, nonce) = contentKeys(
            secret: sharedSecret.withUnsafeBytes { Array($0) }, keys: keys, senderPublic: senderPublic, salt: salt)
        // One record, so the sequence number is 0 and the nonce is used as derived; 0x02 marks the last record.
        let record = plaintext + [2] + [UInt8](repeating: 0, count: padding)
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: SymmetricKey(data: cek), nonce: AES.GCM.Nonce(data: nonce))
        } catch {
            throw Failure(field: "payload", message: "AES-GCM encryption failed: \(error)")
        }
        var body: [UInt8] = salt
        body.reserveCapacity(headerLength + record.count + tagLength)
        body += [UInt8(recordSize >> 24), UInt8(recordSize >> 16 & 0xFF), UInt8(recordSize >> 8 & 0xFF), UInt8(recordSize & 0xFF)]
        body.append(UInt8(senderPublic.count))
        body += senderPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }
}
