import PushSimulator
import Crypto
import Testing

/// The simulator's RFC 8291 decryption against the RFC's own example.
@Suite struct WebPushDecryptorTests {
    /// RFC 8291 Appendix A (the message encryption example): the user agent's private key and auth secret, and the
    /// body the application server sent.
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_"
        + "yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func key() throws -> P256.KeyAgreement.PrivateKey {
        try P256.KeyAgreement.PrivateKey(rawRepresentation: #require(StrictBase64URL.decode(uaPrivate)))
    }

    @Test func rfc8291AppendixAMessageDecryptsToItsPlaintext() throws {
        let key = try Self.key()
        #expect(StrictBase64URL.encode(key.publicKey.x963Representation) == Self.uaPublic)
        let plaintext = try WebPushDecryptor.decrypt(
            body: #require(StrictBase64URL.decode(Self.body)), privateKey: key, authSecret: #require(StrictBase64URL.decode(Self.authSecret)))
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func aBodyChangedAnywhereOrTheWrongSecretDoesNotDecrypt() throws {
        let key = try Self.key()
        let body = try #require(StrictBase64URL.decode(Self.body))
        let auth = try #require(StrictBase64URL.decode(Self.authSecret))
        // The salt, idlen, the sender's key, the ciphertext and the tag. (Not rs: a record size still at least the
        // one record's length changes nothing, as RFC 8188 has it.)
        for index in [0, 20, 30, body.count - 20, body.count - 1] {
            var changed = body
            changed[index] ^= 0x01
            #expect(throws: WebPushDecryptor.Failure.self, "byte \(index)") {
                try WebPushDecryptor.decrypt(body: changed, privateKey: key, authSecret: auth)
            }
        }
        var otherSecret = auth
        otherSecret[0] ^= 0x01
        #expect(throws: WebPushDecryptor.Failure.self) {
            try WebPushDecryptor.decrypt(body: body, privateKey: key, authSecret: otherSecret)
        }
        #expect(throws: WebPushDecryptor.Failure.self) {
            try WebPushDecryptor.decrypt(body: Array(body.prefix(40)), privateKey: key, authSecret: auth)
        }
    }

    @Test func base64URLIsStrict() {
        #expect(StrictBase64URL.decode("BTBZMqHH6r4Tts7J_aSIgg")?.count == 16)
        #expect(StrictBase64URL.decode("BTBZMqHH6r4Tts7J/aSIgg") == nil)
        #expect(StrictBase64URL.decode("BTBZMqHH6r4Tts7J_aSIgg==") == nil)
        #expect(StrictBase64URL.decode("BTBZMqHH6r4Tts7J_aSIgh") == nil)
    }
}
