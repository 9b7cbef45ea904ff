import Crypto
import Foundation

/// The user agent's half of RFC 8291 (Message Encryption for Web Push) over RFC 8188's `aes128gcm` content
/// coding: what a browser does with a push message body. Written against the RFCs alone — it shares no code with
/// PushSender's encryption, so each referees the other.
public enum WebPushDecryptor {
    /// Why a body does not decrypt (each answered 400 by the simulator, with this text).
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, one line.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The RFC 8188 header: salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid(idlen).
    static let headerFixedBytes = 21
    /// AES-GCM's tag.
    static let tagBytes = 16

    /// Decrypts one `aes128gcm` push message body for the subscription whose key agreement key is `privateKey` and
    /// whose authentication secret is `authSecret`; returns the plaintext without its padding.
    ///
    /// RFC 8291 §3.4: keyid is the application server's public key (65 octets, uncompressed P-256); IKM =
    /// HKDF(auth_secret, ECDH(ua_private, as_public), "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public, 32); then RFC
    /// 8188 §2.2–2.3: CEK and NONCE from HKDF(salt, IKM); one record (§4: a push message is one record, so the
    /// ciphertext fits in rs), whose plaintext ends with the last-record delimiter 0x02 followed by zero padding.
    public static func decrypt(
        body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]
    ) throws(Failure) -> [UInt8] {
        guard body.count >= headerFixedBytes else { throw Failure("body shorter than the aes128gcm header (21 bytes)") }
        let salt = Array(body[0..<16])
        let rs = body[16..<20].reduce(0) { ($0 << 8) | Int($1) }
        let idlen = Int(body[20])
        guard rs >= 18 else { throw Failure("record size \(rs) is below the minimum of 18") }
        guard idlen == 65, body.count >= headerFixedBytes + idlen else {
            throw Failure("keyid must be the application server's 65-byte uncompressed P-256 public key (idlen \(idlen))")
        }
        let senderKeyBytes = Array(body[headerFixedBytes..<(headerFixedBytes + idlen)])
        let ciphertext = Array(body[(headerFixedBytes + idlen)...])
        guard ciphertext.count > tagBytes else { throw Failure("no ciphertext after the header") }
        guard ciphertext.count <= rs else {
            throw Failure("ciphertext of \(ciphertext.count) bytes is more than one record of \(rs) (RFC 8291 allows one)")
        }
        guard senderKeyBytes.first == 0x04, let senderKey = try? P256.KeyAgreement.PublicKey(x963Representation: senderKeyBytes) else {
            throw Failure("keyid is not a P-256 point")
        }
        guard let shared = try? privateKey.sharedSecretFromKeyAgreement(with: senderKey) else {
            throw Failure("key agreement with the keyid failed")
        }
        let keyInfo = Array("WebPush: info".utf8) + [0] + privateKey.publicKey.x963Representation + senderKeyBytes
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // Record sequence number 0: the nonce is used as derived (XOR with zero).
        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }),
                ciphertext: ciphertext.dropLast(tagBytes), tag: ciphertext.suffix(tagBytes))
            padded = Array(try AES.GCM.open(box, using: cek))
        } catch {
            throw Failure("AES-GCM authentication failed (wrong keys, auth secret or salt, or a corrupted body)")
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw Failure("the record does not end with the last-record padding delimiter 0x02")
        }
        return Array(padded[..<delimiter])
    }
}
