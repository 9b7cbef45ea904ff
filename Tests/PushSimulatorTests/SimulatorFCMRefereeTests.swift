import PushSimulator
import Foundation
import PushCore
import TestSupport
import Testing

/// Two implementations agree (#40's acceptance): Google's own OAuth client library, google-auth from PyPI
/// (service-account credentials, `refresh()` over requests, the simulator's CA trusted, verification on), is granted
/// an FCM access token by the simulator's token endpoint over a real TLS socket, and refused when its assertion is
/// signed by another key or names another audience. Tests/fcm/sim_google_auth.py is the client; `make referees`
/// installs it. Fails (never skips) when google-auth is missing.
@Suite(.timeLimit(.minutes(2)))
struct SimulatorFCMRefereeTests {
    @Test func googleAuthIsGrantedATokenAndRefusedWithAnotherKeyOrAudience() async throws {
        try await SimulatorFixture.run(.either) { fixture in
            let simulator = fixture.simulator
            let directory = try TemporaryDirectories.make("fcm-google-auth")
            let (account, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: simulator.tokenURI) }
            try simulator.trustServiceAccount(account)
            // The same account (email, key id) with a key the simulator never issued.
            let (_, otherJSON) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: simulator.tokenURI) }
            var forged = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let other = try #require(try JSONSerialization.jsonObject(with: Data(otherJSON.utf8)) as? [String: Any])
            forged["private_key"] = other["private_key"]
            let accountFile = directory + "/account.json", forgedFile = directory + "/forged.json", caFile = directory + "/ca.pem"
            try json.write(toFile: accountFile, atomically: true, encoding: .utf8)
            try JSONSerialization.data(withJSONObject: forged).write(to: URL(fileURLWithPath: forgedFile))
            for file in [accountFile, forgedFile] {
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            }
            try fixture.pki.ca.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)

            let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/fcm/sim_google_auth.py").path
            // requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override a session's CA: name the simulator's in both.
            var environment = ProcessInfo.processInfo.environment
            environment["REQUESTS_CA_BUNDLE"] = caFile
            environment["CURL_CA_BUNDLE"] = caFile
            let outcome = try await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, accountFile, forgedFile, caFile],
                environment: environment, timeout: 120)
            try #require(
                outcome.status == 0,
                "sim_google_auth.py failed (\(outcome.status)); `make referees` installs google-auth: \(outcome.stderr)")
            var answers: [String: JSONValue] = [:]
            for line in outcome.stdout.split(separator: "\n") {
                let answer = try JSONValue(parsing: Array(line.utf8))
                answers[answer["name"]?.stringValue ?? ""] = answer
            }
            try #require(answers.count == 3, "\(outcome.stdout)\n\(outcome.stderr)")

            let valid = try #require(answers["valid"])
            #expect(valid["granted"] == .bool(true), "\(valid.encodedString)")
            let token = try #require(valid["token"]?.stringValue)
            #expect(simulator.isValidAccessToken(token), "the token google-auth holds is one the simulator granted")
            #expect(valid["valid"] == .bool(true))

            let otherKey = try #require(answers["other-key"])
            #expect(otherKey["granted"] == .bool(false))
            #expect(otherKey["error"]?.stringValue?.contains("invalid_grant: Invalid JWT Signature.") == true, "\(otherKey.encodedString)")

            let otherAudience = try #require(answers["other-audience"])
            #expect(otherAudience["granted"] == .bool(false))
            #expect(otherAudience["error"]?.stringValue?.contains("invalid_grant: Invalid JWT: Failed audience check") == true,
                    "\(otherAudience.encodedString)")

            #expect(simulator.accessTokensGranted == 1)
            #expect(simulator.accessTokenRequestsRefused == 2)
        }
    }
}
