import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// `pushctl tokens …` run as the built binary.
@Suite struct TokensCommandTests {
    let directory = makeTempDirectory()
    let config: String
    let database: String

    init() {
        (config, database) = writeConfig(in: directory)
    }

    func run(_ arguments: String..., stdin: String? = nil) async throws -> RunResult {
        try await pushctl(["tokens"] + arguments, config: config, stdin: stdin)
    }

    /// `tokens import --service webpush`: JSON lines of subscriptions and fields, judged as the API judges them; a
    /// bad line names its number and field and its batch writes nothing; an app without webpush is a usage error.
    @Test(.timeLimit(.minutes(2)))
    func webPushSubscriptionsAreImportedAsJSONLines() async throws {
        let dir = makeTempDirectory()
        let config = dir + "/pushctl.json"
        try """
            { "database": "data/registry.sqlite", "simulator": {"certificates": "certs"},
              "apps": { "example": { "topic": "com.example.app", "endpoint": "simulator",
                                     "auth": {"p12": "client.p12", "passwordFile": "client.p12.password"},
                                     "webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com",
                                                 "allowedHosts": ["push.example.net"]} } } }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        // The P-256 generator: a point on the curve.
        let p256dh = "BGsX0fLhLEJH-Lzm5WOkQPJ3A32BLeszoPShOUXYmMKWT-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"
        func line(_ endpoint: String, _ extra: String = "") -> String {
            #"{"subscription":{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}\#(extra)}"#
        }
        let good = [line("https://web.push.apple.com/a", #","locale":"fr-FR""#), line("https://push.example.net/b", #","channels":["news"]"#)]
        let imported = try await pushctl(["tokens", "import", "--app", "example", "--service", "webpush", "-"], config: config,
                                         stdin: good.joined(separator: "\n") + "\n")
        #expect(imported.status == 0 && imported.stdout == "imported 2 tokens in 1 batches\n", "\(imported.stderr)")
        let devices = try blocking { try SQLiteRegistry(path: dir + "/data/registry.sqlite").list(app: "example") }
        #expect(Set(devices.map(\.token)) == [DeviceKey.webPush(endpointURL: "https://web.push.apple.com/a"),
                                              DeviceKey.webPush(endpointURL: "https://push.example.net/b")])
        #expect(devices.allSatisfy { $0.service == .webpush && $0.webPush != nil })
        // A host outside the list: the line and field are named, and its batch writes nothing.
        let bad = try await pushctl(["tokens", "import", "--app", "example", "--service", "webpush", "-"], config: config,
                                    stdin: line("https://web.push.apple.com/c") + "\n" + line("https://evil.example.com/d") + "\n")
        #expect(bad.status == 2 && bad.stderr.contains("line 2: subscription.endpoint host 'evil.example.com'"), "\(bad.stderr)")
        #expect(try blocking { try SQLiteRegistry(path: dir + "/data/registry.sqlite").count(app: "example", channel: nil, environment: nil) } == 2)
        // Without webpush configured: exit 2, one line.
        let plain = try await run("import", "--app", "example", "--service", "webpush", "-", stdin: line("https://web.push.apple.com/a") + "\n")
        #expect(plain.status == 2 && plain.stderr.contains("has no Web Push configured"), "\(plain.stderr)")

        // --format jsonl without --service: each line is exactly the API's registration body, its own `service`
        // deciding (apns when left out), so an export of mixed devices imports as they registered.
        let apnsToken = String(repeating: "ab", count: 32)
        let fcmToken = "eXaMpLe-mixed_0123456789abcd:APA91b" + String(repeating: "Zz9_-", count: 26)
        let mixed = [
            #"{"service":"webpush","subscription":{"endpoint":"https://push.example.net/mixed","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}},"locale":"de-DE"}"#,
            #"{"token":"\#(apnsToken)","channels":["news"]}"#,
            #"{"service":"fcm","token":"\#(fcmToken)"}"#,
        ]
        let both = try await pushctl(["tokens", "import", "--app", "example", "--format", "jsonl", "-"], config: config,
                                     stdin: mixed.joined(separator: "\n") + "\n")
        #expect(both.status == 0 && both.stdout == "imported 3 tokens in 1 batches\n", "\(both.stderr)")
        let all = try blocking { try SQLiteRegistry(path: dir + "/data/registry.sqlite").list(app: "example") }
        #expect(all.first { $0.token == DeviceKey.webPush(endpointURL: "https://push.example.net/mixed") }?.service == .webpush)
        #expect(all.first { $0.token == DeviceKey.fcm(token: fcmToken) }?.service == .fcm)
        #expect(all.first { $0.token.hex == apnsToken }?.service == .apns)
        // --service apns with a line naming another service: refused by name.
        let apnsOnly = try await pushctl(["tokens", "import", "--app", "example", "--service", "apns", "--format", "jsonl", "-"],
                                         config: config, stdin: mixed[2] + "\n")
        #expect(apnsOnly.status == 2 && apnsOnly.stderr.contains("line 1: service must be apns"), "\(apnsOnly.stderr)")
    }

    /// `tokens import --service fcm`: registration tokens one per line, verbatim, judged as the API judges them (no
    /// FCM configuration needed); a bad line is named with its number and its batch writes nothing; JSON lines too.
    @Test(.timeLimit(.minutes(2)))
    func fcmRegistrationTokensAreImportedOnePerLine() async throws {
        func token(_ n: Int) -> String { "eXaMpLe\(n)-_0123456789abcd:APA91b" + String(repeating: "Zz9_-", count: 26) }
        let imported = try await run("import", "--app", "example", "--service", "fcm", "--channel", "news", "-",
                                     stdin: "# exported from the old server\n\(token(1))\n\n\(token(2))\n")
        #expect(imported.status == 0 && imported.stdout == "imported 2 tokens in 1 batches\n", "\(imported.stderr)")
        let devices = try blocking { try SQLiteRegistry(path: database).list(app: "example") }
        #expect(Set(devices.map(\.token)) == [DeviceKey.fcm(token: token(1)), DeviceKey.fcm(token: token(2))])
        #expect(Set(devices.compactMap(\.registrationToken)) == [token(1), token(2)])
        #expect(devices.allSatisfy { $0.service == .fcm && $0.channels == ["news"] })
        // Bad lines (too short, another alphabet): each named with its number, exit 2, and their batch writes nothing.
        let bad = try await run("import", "--app", "example", "--service", "fcm", "-",
                                stdin: "\(token(3))\nshort-token\n\(token(4))/x\n")
        #expect(bad.status == 2, "\(bad.stderr)")
        #expect(bad.stderr.contains("line 2: token must be an FCM registration token of 32…4096 characters, not 11"), "\(bad.stderr)")
        #expect(bad.stderr.contains("line 3: token must be an FCM registration token: only A-Z a-z 0-9 - _ :"), "\(bad.stderr)")
        #expect(bad.stdout == "imported 0 tokens in 0 batches\n")
        #expect(try blocking { try SQLiteRegistry(path: database).count(app: "example", channel: nil, environment: nil) } == 2)
        // JSON lines: a registration object per line, service fcm implied; another service is refused.
        let jsonl = try await run("import", "--app", "example", "--service", "fcm", "--format", "jsonl", "-",
                                  stdin: #"{"token":"\#(token(5))","locale":"de-DE"}"# + "\n")
        #expect(jsonl.status == 0 && jsonl.stdout == "imported 1 tokens in 1 batches\n", "\(jsonl.stderr)")
        #expect(try blocking { try SQLiteRegistry(path: database).installation(app: "example", token: DeviceKey.fcm(token: token(5))) }?.locale == "de-DE")
        let other = try await run("import", "--app", "example", "--service", "fcm", "--format", "jsonl", "-",
                                  stdin: #"{"service":"apns","token":"\#(token(6))"}"# + "\n")
        #expect(other.status == 2 && other.stderr.contains("line 1: service must be fcm"), "\(other.stderr)")
        let unknown = try await run("import", "--app", "example", "--service", "gcm", "-", stdin: token(7) + "\n")
        #expect(unknown.status == 2 && unknown.stderr.contains("--service must be apns, webpush, fcm, hms, harmonyos or unifiedpush"), "\(unknown.stderr)")
        #expect(try blocking { try SQLiteRegistry(path: database).count(app: "example", channel: nil, environment: nil) } == 3)
    }

    @Test(.timeLimit(.minutes(2)))
    func acceptanceReplacesNSDataToken() async throws {
        let nsData = "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>"
        let canonical = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        var result = try await run("add", "--app", "example", nsData, "--old", "(null)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await run("export", "--app", "example").stdout == canonical + "\n")
        let new = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
        result = try await run("add", "--app", "example", new, "--old", canonical)
        #expect(result.status == 0)
        #expect(result.stdout.contains("replaced"))
        #expect(try await run("export", "--app", "example").stdout == new + "\n")
        #expect(try await run("count", "--app", "example").stdout == "1\n")
        #expect(try blocking { try SQLiteRegistry(path: database).list(app: "example") }.map(\.token.hex) == [new])
    }

    @Test(.timeLimit(.minutes(2)))
    func aCommandLeavesItsFewWALPagesAndTheNextCommandReadsThem() async throws {
        let token = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
        let added = try await run("add", "--app", "example", token)
        #expect(added.status == 0, "\(added.stderr)")
        // The command closed the registry without a checkpoint: its commit is still in the WAL, and the next
        // process finds it there.
        let wal = (try FileManager.default.attributesOfItem(atPath: database + "-wal"))[.size] as? Int
        #expect((wal ?? 0) > 0)
        #expect(try await run("export", "--app", "example").stdout == token + "\n")
    }

    @Test(.timeLimit(.minutes(2)))
    func unknownAppAndBadTokenExitTwo() async throws {
        var result = try await run("count", "--app", "nope")
        #expect(result.status == 2)
        #expect(result.stderr == "pushctl: unknown app 'nope'; configured apps: example\n")
        result = try await run("add", "--app", "example", "xyz")
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count == 1)
        result = try await run("add", "--app", "example", "00112233445566778899aabbccddeeff", "--environment", "staging")
        #expect(result.status == 2)
        let registry = try SQLiteRegistry(path: database)
        #expect(try await registry.run { _ in try registry.count(app: "example") } == 0)
    }

    @Test(.timeLimit(.minutes(2)))
    func listJSONCountChannelRemove() async throws {
        let a = testToken(1).hex, b = testToken(2).hex
        #expect(try await run("add", "--app", "example", a, "--channel", "news", "--channel", "sport").status == 0)
        #expect(try await run("add", "--app", "example", b, "--environment", "production").status == 0)
        let json = try await run("list", "--app", "example", "--json")
        #expect(json.status == 0)
        let parsed = try JSONValue(parsing: Array(json.stdout.utf8))
        guard case .array(let items) = parsed else { Issue.record("not an array: \(json.stdout)"); return }
        let byToken = Dictionary(uniqueKeysWithValues: items.map { ($0["token"]?.stringValue ?? "", $0) })
        #expect(byToken[a]?["channels"] == .array([.string("news"), .string("sport")]))
        #expect(byToken[a]?["environment"] == .string("development"))  // the simulator endpoint's default
        #expect(byToken[b]?["environment"] == .string("production"))
        #expect(byToken[b]?["lastSuccessMs"] == .null)
        #expect(try await run("count", "--app", "example", "--channel", "news").stdout == "1\n")
        #expect(try await run("list", "--app", "example", "--channel", "sport").stdout == "\(a) development news,sport\n")
        #expect(try await run("remove", "--app", "example", a).status == 0)
        #expect(try await run("count", "--app", "example").stdout == "1\n")
    }

    @Test(.timeLimit(.minutes(2)))
    func importReportsLineNumbersAndExportRoundTrips() async throws {
        let good = (0..<5).map { testToken($0).hex }
        let input = [good[0], good[1], "", "# comment", good[2], "nothex!", good[3], good[4]].joined(separator: "\n")
        let result = try await run("import", "--app", "example", "--batch-size", "3", "-", stdin: input)
        #expect(result.status == 2)
        #expect(result.stderr.contains("line 6:"))
        #expect(result.stdout.contains("imported 3 tokens in 1 batches"))
        // Batch 1 (lines 1,2,5) committed; batch 2 (lines 6,7,8) had the bad line and wrote nothing.
        let exported = try await run("export", "--app", "example")
        #expect(exported.stdout == [good[0], good[1], good[2]].sorted().joined(separator: "\n") + "\n")
        let file = directory + "/export.txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data((good.joined(separator: "\n") + "\n").utf8))
        #expect(try await run("import", "--app", "example", file).status == 0)
        #expect(try await run("count", "--app", "example").stdout == "5\n")
    }
}
