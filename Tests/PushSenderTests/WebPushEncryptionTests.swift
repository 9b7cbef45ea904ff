import Crypto
import Foundation
import PushCore
@testable import PushSender
import Testing

@Suite struct WebPushEncryptionTests {
    /// RFC 8291 Appendix A: the application server's and the user agent's keys, the salt and the auth secret.
    enum Vector {
        static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
        static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    static func bytes(_ text: String) throws -> [UInt8] { try #require(Base64URL.decode(text)) }

    @Test func theRFC8291AppendixAVectorGivesItsExactBody() throws {
        let keys = try WebPushEncryption.RecipientKeys(p256dh: try Self.bytes(Vector.uaPublic), auth: try Self.bytes(Vector.auth))
        let ephemeral = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes(Vector.asPrivate))
        let body = try WebPushEncryption.encrypt(Vector.plaintext, for: keys, padding: 0, ephemeralKey: ephemeral, salt: try Self.bytes(Vector.salt))
        #expect(Base64URL.encode(body) == Vector.body)
    }

    @Test func theBodyIsOneRecordOfAtMost4096Bytes() throws {
        let browser = P256.KeyAgreement.PrivateKey()
        let keys = try WebPushEncryption.RecipientKeys(p256dh: Array(browser.publicKey.x963Representation), auth: Array(repeating: 7, count: 16))
        let body = try WebPushEncryption.encrypt(Array("hi".utf8), for: keys)
        #expect(body.count == 86 + 2 + 1 + 16)
        #expect(Array(body[16..<21]) == [0, 0, 0x10, 0, 65])  // rs 4096, idlen 65
        #expect(body[21] == 4)
        // Two encryptions of the same text differ (new ephemeral key and salt each time).
        #expect(try WebPushEncryption.encrypt(Array("hi".utf8), for: keys) != body)

        let largest = [UInt8](repeating: 0x61, count: WebPushEncryption.maximumPlaintextLength)
        #expect(WebPushEncryption.maximumPlaintextLength == 3993)
        #expect(try WebPushEncryption.encrypt(largest, for: keys).count == 4096)
        #expect(try WebPushEncryption.encrypt(Array(largest.dropLast(100)), for: keys, padding: 100).count == 4096)
        let tooLong = #expect(throws: WebPushEncryption.Failure.self) { try WebPushEncryption.encrypt(largest + [0x61], for: keys) }
        #expect(tooLong?.message == "the Web Push payload is 3994 bytes; at most 3993 fit one encrypted record of 4096 bytes")
        #expect(throws: WebPushEncryption.Failure.self) { try WebPushEncryption.encrypt(Array(largest.dropLast(9)), for: keys, padding: 10) }
    }

    @Test func keysThatCannotBeEncryptedToAreRefusedNamingTheKey() throws {
        let point = try Self.bytes(Vector.uaPublic)
        var offCurve = point
        offCurve[64] ^= 1
        let cases: [([UInt8], [UInt8], String)] = [
            (offCurve, Array(repeating: 1, count: 16), "keys.p256dh is not a point on the P-256 curve"),
            (Array(point.prefix(33)), Array(repeating: 1, count: 16), "keys.p256dh must be an uncompressed P-256 public key (65 bytes starting 0x04), not 33 bytes"),
            ([0x04] + Array(repeating: 0, count: 64), Array(repeating: 1, count: 16), "keys.p256dh is not a point on the P-256 curve"),
            (point, Array(repeating: 1, count: 15), "keys.auth must be 16 bytes, not 15"),
        ]
        for (p256dh, auth, message) in cases {
            let failure = #expect(throws: WebPushEncryption.Failure.self) { try WebPushEncryption.validate(p256dh: p256dh, auth: auth) }
            #expect(failure?.message == message)
        }
        try WebPushEncryption.validate(p256dh: point, auth: Array(repeating: 1, count: 16))
    }

    /// The ephemeral key is the 32 bytes after the salt taken as a scalar, refused (and drawn again) outside
    /// [1, n − 1]: the group order n itself, 0 and all-ones are refused, n − 1 and 1 are keys.
    @Test func theEphemeralScalarIsUsedOnlyInsideOneToTheOrderLessOne() throws {
        let salt = [UInt8](0..<16)
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        var orderLessOne = order
        orderLessOne[31] -= 1
        #expect(WebPushEncryption.saltAndKey(from: salt + order)?.salt == nil)
        #expect(WebPushEncryption.saltAndKey(from: salt + [UInt8](repeating: 0, count: 32))?.salt == nil)
        #expect(WebPushEncryption.saltAndKey(from: salt + [UInt8](repeating: 0xFF, count: 32))?.salt == nil)
        let largest = try #require(WebPushEncryption.saltAndKey(from: salt + orderLessOne))
        #expect(largest.salt == salt)
        #expect(Array(largest.key.rawRepresentation) == orderLessOne)
        let one = try #require(WebPushEncryption.saltAndKey(from: salt + [UInt8](repeating: 0, count: 31) + [1]))
        // 1·G is the generator, whose x coordinate is P-256's Gx.
        #expect(Base64URL.encode(one.key.publicKey.x963Representation.dropFirst().prefix(32)) == "axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY")
    }

    /// Each message gets its own salt and key, and the key decrypts as any P-256 key does (the RFC 8291 vector's
    /// arithmetic through the seam, with a fresh key: the browser side's shared secret is the same).
    @Test func freshSaltsAndKeysDifferAndAgreeWithTheBrowserSide() throws {
        let first = WebPushEncryption.freshSaltAndKey()
        let second = WebPushEncryption.freshSaltAndKey()
        #expect(first.salt.count == 16 && first.salt != second.salt)
        #expect(first.key.rawRepresentation != second.key.rawRepresentation)
        let browser = P256.KeyAgreement.PrivateKey()
        let ours = try first.key.sharedSecretFromKeyAgreement(with: browser.publicKey)
        let theirs = try browser.sharedSecretFromKeyAgreement(with: first.key.publicKey)
        #expect(ours.withUnsafeBytes { Array($0) } == theirs.withUnsafeBytes { Array($0) })
    }
}
