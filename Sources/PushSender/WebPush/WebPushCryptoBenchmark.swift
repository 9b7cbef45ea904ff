import Crypto
import PushCore
#if canImport(Glibc)
import Glibc
#endif

/// `pushctl webpush bench-crypto` (hidden; bench/bench_webpush.sh runs it): µs per operation of one Web Push
/// message's cryptography as swift-crypto (BoringSSL inside) does it in this build, each timed `count` times in a row
/// in this thread's CPU time (a shared box deschedules us; `openssl speed` divides by CPU time too), to set beside
/// `openssl speed ecdhp256 ecdsap256` on the same machine. The key generations are the ways there are
/// to make an ephemeral key (``WebPushEncryption/freshSaltAndKey()`` is the one the sender uses).
package enum WebPushCryptoBenchmark {
    /// Each operation's name and its mean µs.
    package static func run(count: Int) throws -> [(name: String, microseconds: Double)] {
        let browser = P256.KeyAgreement.PrivateKey(compactRepresentable: false)
        let p256dh = Array(browser.publicKey.x963Representation)
        let auth = [UInt8](repeating: 7, count: 16)
        let keys = try WebPushEncryption.RecipientKeys(p256dh: p256dh, auth: auth)
        let ephemeral = P256.KeyAgreement.PrivateKey(compactRepresentable: false)
        let signing = P256.Signing.PrivateKey(compactRepresentable: false)
        let digest = SHA256.hash(data: [UInt8](repeating: 1, count: 32))
        let plaintext = Array(#"{"id":"5b1d2c8e-7f0a-4c3e-9d61-2a7b8c9d0e1f","title":"PushProvider","body":"Benchmark"}"#.utf8)
        let salt = [UInt8](repeating: 9, count: 16)
        var results: [(name: String, microseconds: Double)] = []
        func cpuNanoseconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
        }
        func time(_ name: String, _ body: () throws -> Void) rethrows {
            try body()  // warm
            let start = cpuNanoseconds()
            for _ in 0..<count { try body() }
            results.append((name, (cpuNanoseconds() - start) / Double(count) / 1000))
        }
        time("key pair: P256.KeyAgreement.PrivateKey() (swift-crypto's default, compactRepresentable: true)") {
            _ = P256.KeyAgreement.PrivateKey()
        }
        time("key pair: P256.KeyAgreement.PrivateKey(compactRepresentable: false)") {
            _ = P256.KeyAgreement.PrivateKey(compactRepresentable: false)
        }
        time("key pair and salt: WebPushEncryption.freshSaltAndKey() (one getrandom, one multiplication)") {
            _ = WebPushEncryption.freshSaltAndKey()
        }
        time("the key pair's public key, x9.63 (65 bytes)") { _ = ephemeral.publicKey.x963Representation }
        try time("ECDH shared secret (variable-base multiplication; openssl speed ecdhp256)") {
            _ = try ephemeral.sharedSecretFromKeyAgreement(with: keys.publicKey)
        }
        try time("ECDSA P-256 signature of a digest (openssl speed ecdsap256 sign)") { _ = try signing.signature(for: digest) }
        try time("the subscription's p256dh parsed and judged (RecipientKeys)") {
            _ = try WebPushEncryption.RecipientKeys(p256dh: p256dh, auth: auth)
        }
        // The parts of encrypt() after the key agreement, each alone: where its time beyond the two multiplications goes.
        let shared = try ephemeral.sharedSecretFromKeyAgreement(with: keys.publicKey)
        let senderPublic = Array(ephemeral.publicKey.x963Representation)
        let keyInfo = WebPushEncryption.keyInfoLabel + p256dh + senderPublic
        time("HKDF through swift-crypto: the IKM from the shared secret (SharedSecret.hkdfDerivedSymmetricKey, 32 bytes)") {
            _ = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        }
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let cekInfo = WebPushEncryption.cekInfo
        let nonceInfo = WebPushEncryption.nonceInfo
        time("HKDF through swift-crypto: PRK extracted, CEK and nonce expanded (HKDF<SHA256>.extract, 2 × expand)") {
            let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
            _ = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: cekInfo, outputByteCount: 16)
            _ = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: nonceInfo, outputByteCount: 12)
        }
        let secret = shared.withUnsafeBytes { Array($0) }
        time("HKDF through OpenSSL, the four steps (OpenSSLHKDF: IKM, PRK, CEK, nonce; what the sender does)") {
            _ = WebPushEncryption.contentKeys(secret: secret, keys: keys, senderPublic: senderPublic, salt: salt)
        }
        let cek = SymmetricKey(data: [UInt8](repeating: 3, count: 16))
        let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 4, count: 12))
        let record = plaintext + [2]
        try time("AES-128-GCM seal of one record (the payload and its delimiter)") {
            _ = try AES.GCM.seal(record, using: cek, nonce: nonce)
        }
        try time("one message encrypted with a given key and salt (no key generation: agreement, HKDF, seal, body)") {
            _ = try WebPushEncryption.encrypt(plaintext, for: keys, padding: 0, ephemeralKey: ephemeral, salt: salt)
        }
        try time("one message encrypted with swift-crypto's default key pair (before)") {
            _ = try WebPushEncryption.encrypt(plaintext, for: keys, padding: 0, ephemeralKey: P256.KeyAgreement.PrivateKey(), salt: salt)
        }
        try time("one message encrypted as the sender does (WebPushEncryption.encrypt)") {
            _ = try WebPushEncryption.encrypt(plaintext, for: keys)
        }
        return results
    }
}
