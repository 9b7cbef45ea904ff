import Foundation
import PushCore
import Testing

@Suite struct PayloadCommandTests {
    func firstLine(_ s: String) -> String { String(s.split(separator: "\n", omittingEmptySubsequences: false).first ?? "") }

    @Test func readmeAlertExample() async throws {
        let r = try await CLI.run(["payload", "--alert", "Houston, we have a problem.", "--sound", "default"])
        #expect(r.status == 0)
        #expect(firstLine(r.stdout) == #"{"aps":{"alert":"Houston, we have a problem.","sound":"default"}}"#)
        #expect(r.stdout.contains("apns-push-type: alert"))
        #expect(r.stdout.contains("apns-priority: 10"))
    }

    @Test func webpushAndFCMShowWhatABrowserAndAnAndroidDeviceGetAndASilentPushSaysWhyWebDevicesGetNothing() async throws {
        let r = try await CLI.run(["payload", "--alert", "Breaking", "--collapse-id", "n1", "--webpush", "--fcm"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"webpush: {"id":"00000000-0000-0000-0000-000000000000","body":"Breaking","tag":"n1"} (74 bytes, serviceWorker)"#), "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix(#"fcm: {"message":{"token":"DEVICE_REGISTRATION_TOKEN","notification":{"body":"Breaking"}"#) }, "\(r.stdout)")
        let silent = try await CLI.run(["payload", "--silent", "--data", #"{"k":1}"#, "--webpush", "--json"])
        #expect(silent.status == 0, "\(silent.stderr)")
        let json = try JSONValue(parsing: Array(silent.stdout.utf8))
        #expect(json["webPush"]?["skipped"]?.stringValue?.isEmpty == false, "\(silent.stdout)")
        #expect(json["fcm"] == nil)
        let lone = try await CLI.run(["payload", "--alert", "x", "--declarative"])
        #expect(lone.status == 2 && lone.stderr == "pushctl: --declarative needs --webpush\n", "\(lone.stderr)")
    }

    @Test func unifiedpushShowsTheJSONTheAppGetsAndASilentPushIsSentToIt() async throws {
        let r = try await CLI.run(["payload", "--alert", "Breaking", "--collapse-id", "n1", "--unifiedpush"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"unifiedpush: {"id":"00000000-0000-0000-0000-000000000000","body":"Breaking","tag":"n1"} (74 bytes)"#), "\(r.stdout)")
        let silent = try await CLI.run(["payload", "--silent", "--data", #"{"k":1}"#, "--webpush", "--unifiedpush", "--json"])
        #expect(silent.status == 0, "\(silent.stderr)")
        let json = try JSONValue(parsing: Array(silent.stdout.utf8))
        #expect(json["webPush"]?["skipped"]?.stringValue?.isEmpty == false, "\(silent.stdout)")
        #expect(json["unifiedPush"]?["payload"] == (try JSONValue(parsing: Array(#"{"id":"00000000-0000-0000-0000-000000000000","data":{"k":1}}"#.utf8))), "\(silent.stdout)")
    }

    @Test func readmeSilentExample() async throws {
        let r = try await CLI.run(["payload", "--silent", "--data", #"{"photoTitle":"Nebula"}"#])
        #expect(r.status == 0)
        #expect(firstLine(r.stdout) == #"{"aps":{"content-available":1},"photoTitle":"Nebula"}"#)
        #expect(r.stdout.contains("apns-push-type: background"))
        #expect(r.stdout.contains("apns-priority: 5"))
    }

    @Test func oversizedAlertIsTruncated() async throws {
        let r = try await CLI.run(["payload", "--alert", String(repeating: "é", count: 5000)])
        #expect(r.status == 0)
        let payload = firstLine(r.stdout)
        #expect(payload.utf8.count <= 4096)
        let body = try JSONValue(parsing: payload)["aps"]?["alert"]?.stringValue
        #expect(body?.hasSuffix("…") == true)
        #expect(r.stderr.contains("shortened"))
    }

    @Test func silentWithPriorityTenExitsTwo() async throws {
        let r = try await CLI.run(["payload", "--silent", "--priority", "10"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("priority 10"))
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [
        ["payload", "--alert", "x", "--push-type", "nonsense"],
        ["payload", "--alert", "x", "--priority", "7"],
        ["payload", "--silent", "--alert", "x"],
        ["payload", "--data", "[1]", "--alert", "x"],
        ["payload", "--data", "{", "--alert", "x"],
        ["payload"],
        ["payload", "--alert", "x", "--collapse-id", String(repeating: "c", count: 65)],
        ["payload", "--payload", "/nonexistent/file.json"],
        ["no-such-command"],
    ])
    func invalidInputExitsTwoWithOneLine(args: [String]) async throws {
        let r = try await CLI.run(args)
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("pushctl: "))
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test func rawPayloadFromStdinAndJSONOutput() async throws {
        let r = try await CLI.run(["payload", "--payload", "-", "--json", "--topic", "com.example.app"],
                            stdin: #"{"aps":{"alert":"hi"},"n":1}"#)
        #expect(r.status == 0)
        let out = try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(out["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":"hi"},"n":1}"#)))
        #expect(out["headers"]?["apns-topic"]?.stringValue == "com.example.app")
        #expect(out["truncated"] == .bool(false))
    }

    @Test func helpExitsZero() async throws {
        let r = try await CLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("payload"))
    }
}
