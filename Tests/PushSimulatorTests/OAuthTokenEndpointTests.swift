@testable import PushSimulator
import _CryptoExtras
import Foundation
import PushCore
import PushSender
import TestSupport
import Testing

/// The simulator's OAuth token endpoint (`POST /token`), over real HTTP/2 + TLS: an assertion PushSender signs for a
/// service account the simulator issued is granted a token that the simulator remembers until it expires; each way
/// Google refuses an assertion is refused with Google's error and description.
@Suite(.timeLimit(.minutes(2)))
struct OAuthTokenEndpointTests {
    /// A started simulator trusting a fresh development service account, and that account's file contents.
    static func withAccount(
        lifetime: Int64 = 3599, _ body: (SimulatorFixture, _ json: String) async throws -> Void
    ) async throws {
        try await SimulatorFixture.run(.either, configure: { $0.accessTokenLifetime = lifetime }) { fixture in
            let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: fixture.simulator.tokenURI) }
            try fixture.simulator.trustServiceAccount(account)
            try await body(fixture, json)
        }
    }

    /// The file's JSON with one field replaced.
    static func edited(_ json: String, _ name: String, _ value: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        object[name] = value
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func post(_ fixture: SimulatorFixture, body: String, contentType: String = "application/x-www-form-urlencoded") async throws
        -> (status: Int?, json: JSONValue?)
    {
        let client = try await fixture.connect()
        defer { Task { await client.close() } }
        let response = try await client.send(.init(
            method: "POST", path: "/token", headers: [("content-type", contentType)], body: Array(body.utf8)))
        return (response.status, try? JSONValue(parsing: response.body))
    }

    @Test func anAssertionOfTheIssuedAccountIsGrantedATokenThatExpires() async throws {
        let clock = ManualClock(Int64(Date().timeIntervalSince1970 * 1000))
        try await SimulatorFixture.run(.either, configure: { $0.accessTokenLifetime = 60; $0.clock = { clock.now } }) { fixture in
            let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: fixture.simulator.tokenURI) }
            try fixture.simulator.trustServiceAccount(account)
            let sender = try FCMServiceAccount(json: Array(json.utf8), source: "dev.json")
            #expect(sender.tokenURI == "https://127.0.0.1:\(fixture.port)/token")
            let issued = Date(timeIntervalSince1970: Double(clock.now) / 1000)
            let answer = try await Self.post(fixture, body: try sender.grantRequestBody(issuedAt: issued))
            #expect(answer.status == 200, "\(answer.json?.encodedString ?? "")")
            let token = try #require(answer.json?["access_token"]?.stringValue)
            #expect(answer.json?["expires_in"]?.intValue == 60)
            #expect(answer.json?["token_type"]?.stringValue == "Bearer")
            #expect(fixture.simulator.isValidAccessToken(token))
            #expect(!fixture.simulator.isValidAccessToken(token + "x"))
            #expect(fixture.simulator.accessTokensGranted == 1)
            clock.now += 60_000
            #expect(!fixture.simulator.isValidAccessToken(token), "a token is not valid after expires_in")
        }
    }

    @Test func eachBadAssertionIsRefusedInGooglesWords() async throws {
        try await Self.withAccount { fixture, json in
            let now = Date()
            func body(_ file: String, issuedAt: Date = now) throws -> String {
                try FCMServiceAccount(json: Array(file.utf8), source: "x").grantRequestBody(issuedAt: issuedAt)
            }
            // Another key under the same client_email and key id.
            let (_, otherJSON) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: fixture.simulator.tokenURI) }
            let otherKey = try JSONSerialization.jsonObject(with: Data(otherJSON.utf8)) as? [String: Any]
            let forged = try Self.edited(json, "private_key", try #require(otherKey?["private_key"] as? String))
            let cases: [(String, String, Int, String, String)] = [
                ("another key", try body(forged), 400, "invalid_grant", "Invalid JWT Signature."),
                ("another audience", try body(try Self.edited(json, "token_uri", "https://example.com/token")), 400,
                 "invalid_grant", "Invalid JWT: Failed audience check. The right audience is https://oauth2.googleapis.com/token"),
                ("expired", try body(json, issuedAt: now.addingTimeInterval(-7200)), 400, "invalid_grant", GrantAssertionVerifier.timeframe),
                ("issued in the future", try body(json, issuedAt: now.addingTimeInterval(600)), 400, "invalid_grant", GrantAssertionVerifier.timeframe),
                ("unknown account", try body(try Self.edited(json, "client_email", "x@y.iam.gserviceaccount.com")), 400,
                 "invalid_grant", "Invalid grant: account not found"),
                ("another kid", try body(try Self.edited(json, "private_key_id", "0000")), 400, "invalid_grant", "Invalid JWT Signature."),
                ("another grant type", "grant_type=client_credentials&assertion=x", 400, "unsupported_grant_type", "Invalid grant_type: client_credentials"),
                ("no assertion", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", 400, "invalid_request",
                 "Missing required parameter: assertion"),
                ("not a JWT", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=abc", 400, "invalid_grant",
                 "Invalid JWT: the assertion is not a JWT (three base64url parts: JSON header, JSON claims, signature)"),
            ]
            for (name, requestBody, status, error, description) in cases {
                let answer = try await Self.post(fixture, body: requestBody)
                #expect(answer.status == status, "\(name): \(answer.json?.encodedString ?? "")")
                #expect(answer.json?["error"]?.stringValue == error, "\(name): \(answer.json?.encodedString ?? "")")
                #expect(answer.json?["error_description"]?.stringValue == description, "\(name)")
                #expect(answer.json?["access_token"] == nil, "\(name)")
            }
            let json = try await Self.post(fixture, body: try body(json), contentType: "application/json")
            #expect(json.status == 400 && json.json?["error"]?.stringValue == "invalid_request")
            #expect(fixture.simulator.accessTokensGranted == 0)
            #expect(fixture.simulator.accessTokenRequestsRefused == cases.count + 1)
        }
    }

    @Test func theScopeMustIncludeFirebaseMessagingAndTheLifetimeAtMostAnHour() async throws {
        // Claims PushSender never signs: checked on the verifier directly, with a key made here (off the cooperative
        // pool: a 2,048-bit key takes seconds in a debug build, and a synchronous test holds one of its two threads).
        let key = try await offThePool { try TestRSAKey() }
        let accounts = ["a@b.iam.gserviceaccount.com": key.account]
        func verify(_ claims: String) -> GrantAssertionVerifier.Refusal? {
            let assertion = key.sign(header: #"{"alg":"RS256","typ":"JWT"}"#, claims: claims)
            if case .failure(let refusal) = GrantAssertionVerifier.verify(
                assertion: assertion, accounts: accounts, audiences: ["https://oauth2.googleapis.com/token"], nowSeconds: 1_800_000_000)
            { return refusal }
            return nil
        }
        let base = #""iss":"a@b.iam.gserviceaccount.com","aud":"https://oauth2.googleapis.com/token","iat":1800000000"#
        #expect(verify("{\(base),\"exp\":1800003600,\"scope\":\"https://www.googleapis.com/auth/firebase.messaging\"}") == nil)
        #expect(verify("{\(base),\"exp\":1800003600,\"scope\":\"email https://www.googleapis.com/auth/firebase.messaging\"}") == nil)
        #expect(verify("{\(base),\"exp\":1800003601,\"scope\":\"https://www.googleapis.com/auth/firebase.messaging\"}")?.description
            == GrantAssertionVerifier.timeframe)
        #expect(verify("{\(base),\"scope\":\"https://www.googleapis.com/auth/firebase.messaging\"}")?.description == GrantAssertionVerifier.timeframe)
        #expect(verify("{\(base),\"exp\":1800003600}")?.error == "invalid_scope")
        #expect(verify("{\(base),\"exp\":1800003600,\"scope\":\"https://www.googleapis.com/auth/cloud-platform\"}")?.error == "invalid_scope")
    }
}

/// An RSA key and the verifier's view of it, for claims PushSender never signs.
struct TestRSAKey {
    let key: _RSA.Signing.PrivateKey
    let account: GrantAssertionVerifier.ServiceAccountKey

    init() throws {
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        account = .init(keyId: nil, publicKey: key.publicKey, tokenURI: nil)
    }

    func sign(header: String, claims: String) -> String {
        let input = StrictBase64URL.encode(Array(header.utf8)) + "." + StrictBase64URL.encode(Array(claims.utf8))
        let signature = try! key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + StrictBase64URL.encode(signature.rawRepresentation)
    }
}
