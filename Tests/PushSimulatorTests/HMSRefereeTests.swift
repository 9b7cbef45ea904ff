import PushSimulator
import Foundation
import PushCore
import TestSupport
import Testing

/// A second referee for the simulator's Huawei side: Huawei's own Push Kit server SDK from PyPI
/// (python-huawei-push-admin 1.0.0, pinned by Tests/referees/install.sh; over requests, so HTTP/1.1), pointed at the
/// simulator's origin with its CA verified, is granted an access token by client credentials and sends a notification
/// the simulator accepts and records, a validate-only one it does not record, a partial success whose `msg` names the
/// invalid token, and is refused a token with a wrong secret. Tests/referees/hms_referee.py is the client. Fails
/// (never skips) when the SDK is missing.
@Suite(.timeLimit(.minutes(2)))
struct HMSRefereeTests {
    @Test func huaweisPythonSDKIsGrantedATokenAndSendsWhatTheSimulatorAccepts() async throws {
        let clientId = "104523881", secret = "s3cr+t/with=signs"
        try await SimulatorFixture.run(.either, configure: { $0.hmsApps = [clientId: secret] }) { fixture in
            let simulator = fixture.simulator
            let directory = try TemporaryDirectories.make("hms-referee")
            let secretFile = directory + "/secret", caFile = directory + "/ca.pem"
            try secret.write(toFile: secretFile, atomically: true, encoding: .utf8)
            try fixture.pki.ca.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            let devices = [PushSimulator.mintHMSToken(), PushSimulator.mintHMSToken()]

            let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/referees/hms_referee.py").path
            let outcome = try await ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["python3", script, "--url", simulator.hmsPushBaseURL, "--client-id", clientId, "--secret-file", secretFile,
                 "--ca", caFile] + devices,
                environment: ProcessInfo.processInfo.environment, timeout: 120)
            try #require(
                outcome.status == 0,
                "hms_referee.py failed (\(outcome.status)); `make referees` installs python-huawei-push-admin: \(outcome.stderr)")
            var answers: [String: JSONValue] = [:]
            for line in outcome.stdout.split(separator: "\n") {
                let answer = try JSONValue(parsing: Array(line.utf8))
                answers[answer["name"]?.stringValue ?? ""] = answer
            }
            try #require(answers.count == 4, "\(outcome.stdout)\n\(outcome.stderr)")

            let sent = try #require(answers["notification"])
            #expect(sent["ok"] == .bool(true), "\(sent.encodedString)")
            #expect(sent["code"]?.stringValue == "80000000")
            let dry = try #require(answers["validate-only"])
            #expect(dry["code"]?.stringValue == "80000000", "\(dry.encodedString)")
            let partial = try #require(answers["partial"])
            #expect(partial["code"]?.stringValue == "80100000", "\(partial.encodedString)")
            let detail = try JSONValue(parsing: Array((partial["msg"]?.stringValue ?? "").utf8))
            #expect(detail["illegal_tokens"]?.arrayValue?.compactMap(\.stringValue) == ["not a token!"])
            let refused = try #require(answers["wrong-secret"])
            #expect(refused["ok"] == .bool(false))
            #expect(refused["error"]?.stringValue?.contains("400") == true, "\(refused.encodedString)")

            // The notification to both devices and the partial success's one valid device; not the validate-only.
            let received = simulator.receivedHMSMessages
            #expect(received.map(\.token) == devices + [devices[0]])
            let notification = received.first?.message["android"]?["notification"]
            #expect(notification?["title"]?.stringValue == "Referee")
            #expect(notification?["click_action"]?["type"]?.intValue == 3)
            #expect(received.last?.message["data"]?.stringValue == #"{"k":"v"}"#)
            #expect(simulator.hmsAccessTokensGranted == 1, "the SDK keeps its token (expires_in less 5 minutes)")
            #expect(simulator.hmsAccessTokenRequestsRefused == 1)
        }
    }
}
