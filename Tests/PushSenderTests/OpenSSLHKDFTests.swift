import Testing

@testable import PushSender

/// HKDF-SHA256 through OpenSSL gives RFC 5869's test vectors in each mode, and keeps giving them when its pooled
/// contexts are reused across modes in any order (a context keeps its last salt and info: a mode must never read a
/// stale one).
@Suite struct OpenSSLHKDFTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    // RFC 5869 A.1 (test case 1) and A.3 (test case 3: no salt, no info).
    static let ikm = bytes("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b")
    static let salt = bytes("000102030405060708090a0b0c")
    static let info = bytes("f0f1f2f3f4f5f6f7f8f9")
    static let prk = bytes("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
    static let okm = bytes("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    /// Test case 1's IKM and salt with no info (Python's hmac, RFC 5869 §2 by hand, as the referee).
    static let okmNoInfo = bytes("b2a3d45126d31fb6828ef00d76c6d54e9c2bd4785e49c6ad86e327d89d0de9408eeda1cbef2b03f30e05")
    static let okmNoSaltNoInfo = bytes("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")

    @Test func eachModeGivesRFC5869sVectorsAndReusedContextsNeverReadAStaleSaltOrInfo() {
        for _ in 0..<3 {
            #expect(OpenSSLHKDF.derive(.extractAndExpand, key: Self.ikm, salt: Self.salt, info: Self.info, count: 42) == Self.okm)
            #expect(OpenSSLHKDF.derive(.extractOnly, key: Self.ikm, salt: Self.salt, count: 32) == Self.prk)
            #expect(OpenSSLHKDF.derive(.expandOnly, key: Self.prk, info: Self.info, count: 42) == Self.okm)
            // After an info was set: a salt and none (a pooled context), then neither.
            #expect(OpenSSLHKDF.derive(.extractAndExpand, key: Self.ikm, salt: Self.salt, count: 42) == Self.okmNoInfo)
            #expect(OpenSSLHKDF.derive(.extractAndExpand, key: Self.ikm, count: 42) == Self.okmNoSaltNoInfo)
            #expect(OpenSSLHKDF.derive(.expandOnly, key: Self.prk, info: Self.info, count: 42) == Self.okm)
        }
    }
}
