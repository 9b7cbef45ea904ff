import Foundation
import PushCore
import PushStore
import Testing

/// `pushctl live-activity …` and `pushctl channels …` run as the built binary against a simulator process, checked
/// in the simulator's `--record` file (what arrived on the wire) and in the registry.
@Suite(.timeLimit(.minutes(2))) struct LiveActivityCommandTests {
    typealias World = BroadcastCommandTests.World

    private func run(_ w: World, _ args: [String]) async throws -> CLI.Result {
        try await CLI.run(args + ["--config", w.config, "--app", "example"])
    }

    @Test func tokensStartUpdateEndAndAChannelFromTheCommandLine() async throws {
        var w = try await World.make(tokens: 0, tokenAuth: true)
        defer { w.stop() }
        let startToken = String(repeating: "a1", count: 32), updateToken = String(repeating: "b2", count: 32)
        var r = try await run(w, ["live-activity", "tokens", "register", "--kind", "push-to-start", startToken,
                                  "--installation", "inst-1", "--attributes-type", "ScoreAttributes", "--channel", "fans"])
        #expect(r.status == 0 && r.stdout == "created \(startToken)\n", "\(r.stderr)")
        r = try await run(w, ["live-activity", "start", "--attributes-type", "ScoreAttributes", "--attributes", #"{"home":"Lions"}"#,
                              "--content-state", #"{"score":"0-0"}"#, "--title", "Kick-off", "--alert", "Lions v Bears",
                              "--input-push-token", "--channel", "fans", "--timestamp", "1700000000", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        var record = try #require(try w.records().last)
        #expect(record["token"]?.stringValue == startToken)
        #expect(record["topic"]?.stringValue == "com.example.app.push-type.liveactivity")
        #expect(record["pushType"]?.stringValue == "liveactivity" && record["priority"] == .int(10))
        #expect(record["payload"]?["aps"] == (try JSONValue(parsing: #"""
            {"alert":{"title":"Kick-off","body":"Lions v Bears"},"content-state":{"score":"0-0"},"timestamp":1700000000,"event":"start",
             "attributes-type":"ScoreAttributes","attributes":{"home":"Lions"},"input-push-token":1}
            """#)))

        r = try await run(w, ["live-activity", "tokens", "register", "--kind", "update", updateToken, "--activity-id", "act-1"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await run(w, ["live-activity", "tokens", "list", "--kind", "update", "--json"])
        #expect(try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["activityId"]?.stringValue == "act-1")
        r = try await run(w, ["live-activity", "update", "--activity-id", "act-1", "--content-state", #"{"score":"1-0"}"#,
                              "--priority", "5", "--timestamp", "1700000100"])
        #expect(r.status == 0, "\(r.stderr)")
        record = try #require(try w.records().last)
        #expect(record["token"]?.stringValue == updateToken && record["priority"] == .int(5))
        #expect(record["payload"]?["aps"] == (try JSONValue(parsing: #"{"content-state":{"score":"1-0"},"timestamp":1700000100,"event":"update"}"#)))
        r = try await run(w, ["live-activity", "end", "--activity-id", "act-1", "--content-state", #"{"score":"2-1"}"#,
                              "--dismissal-date", "1700007200", "--timestamp", "1700000200"])
        #expect(r.status == 0, "\(r.stderr)")
        record = try #require(try w.records().last)
        #expect(record["payload"]?["aps"]?["event"]?.stringValue == "end")
        #expect(record["payload"]?["aps"]?["dismissal-date"] == .int(1700007200))
        // The ended activity's update token is gone.
        r = try await run(w, ["live-activity", "tokens", "list", "--kind", "update"])
        #expect(r.status == 0 && r.stdout.isEmpty)
        r = try await run(w, ["live-activity", "update", "--activity-id", "act-1", "--content-state", #"{"score":"3-1"}"#])
        #expect(r.status == 1 && r.stderr.contains("no update token"))

        // A broadcast channel: create, broadcast an update to it, show, list, delete.
        r = try await run(w, ["channels", "create", "--storage-policy", "most-recent", "--label", "Lions v Bears"])
        #expect(r.status == 0, "\(r.stderr)")
        let channelId = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!channelId.isEmpty)
        r = try await run(w, ["live-activity", "update", "--broadcast-channel", channelId, "--content-state", #"{"score":"3-1"}"#,
                              "--timestamp", "1700000300", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        record = try #require(try w.records().last)
        #expect(record["channelId"]?.stringValue == channelId)
        #expect(record["pushType"]?.stringValue == "liveactivity")
        #expect(record["payload"]?["aps"] == (try JSONValue(parsing: #"{"content-state":{"score":"3-1"},"timestamp":1700000300,"event":"update"}"#)))
        // `pushctl send --broadcast-channel` with a payload file: the same wire request.
        let payload = w.dir.appendingPathComponent("end.json").path
        try #"{"aps":{"event":"end","content-state":{"score":"3-2"},"timestamp":1700000400},"matchId":7}"#
            .write(toFile: payload, atomically: true, encoding: .utf8)
        r = try await run(w, ["send", "--broadcast-channel", channelId, "--payload", payload])
        #expect(r.status == 0 && r.stdout.contains("accepted"), "\(r.stderr)")
        record = try #require(try w.records().last)
        #expect(record["channelId"]?.stringValue == channelId)
        #expect(record["payload"] == (try JSONValue(parsing: #"{"aps":{"content-state":{"score":"3-2"},"timestamp":1700000400,"event":"end"},"matchId":7}"#)))
        r = try await run(w, ["channels", "show", channelId, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["storagePolicy"]?.stringValue == "most-recent")
        r = try await run(w, ["channels", "list"])
        #expect(r.status == 0 && r.stdout == "\(channelId) most-recent Lions v Bears\n", "\(r.stdout) \(r.stderr)")
        r = try await run(w, ["channels", "delete", channelId])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await run(w, ["channels", "list"])
        #expect(r.status == 0 && r.stdout.isEmpty)
        // Broadcasting to the deleted channel: APNs refuses, the reason is printed, exit 1.
        r = try await run(w, ["live-activity", "end", "--broadcast-channel", channelId, "--content-state", #"{"score":"3-1"}"#])
        #expect(r.status == 1 && r.stderr.contains("ChannelNotRegistered"), "\(r.stderr)")
    }

    @Test func invalidInputExitsTwoWithOneLineAndSendsNothing() async throws {
        var w = try await World.make(tokens: 0, tokenAuth: true)
        defer { w.stop() }
        let token = String(repeating: "a1", count: 32)
        let cases: [[String]] = [
            ["live-activity", "tokens", "register", "--kind", "push-to-start", token, "--attributes-type", "Score"],  // no installation
            ["live-activity", "tokens", "register", "--kind", "sometimes", token],
            ["live-activity", "start", "--attributes-type", "Score", "--attributes", "[]", "--content-state", "{}", "--title", "t", "--alert", "b", "--token", token],
            ["live-activity", "start", "--attributes-type", "Score", "--attributes", "{}", "--content-state", "{}", "--token", token],  // no alert
            ["live-activity", "update", "--activity-id", "a", "--broadcast-channel", "abcd", "--content-state", "{}"],
            ["live-activity", "update", "--activity-id", "a", "--content-state", "{}", "--priority", "1"],
            ["channels", "create", "--storage-policy", "forever"],
            ["send", "--broadcast-channel", "abcd", "--alert", "hi"],
        ]
        for args in cases {
            let r = try await run(w, args)
            #expect(r.status == 2, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("pushctl: ") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        #expect(try w.records().isEmpty)
    }

    @Test func anAppWithCertificateCredentialsExitsTwoForLiveActivitySends() async throws {
        var w = try await World.make(tokens: 0)  // .p12 credentials
        defer { w.stop() }
        let r = try await run(w, ["live-activity", "update", "--activity-id", "a1", "--content-state", "{}"])
        #expect(r.status == 2 && r.stderr.contains("token-based authentication"), "\(r.stderr)")
        #expect(try w.records().isEmpty)
    }

    @Test func aStartWithAnIdIsAResumableJobOfTheBroadcastEngine() async throws {
        var w = try await World.make(tokens: 0, tokenAuth: true)
        defer { w.stop() }
        for i in 1...3 {
            let token = String(repeating: "e\(i)", count: 32)
            let r = try await run(w, ["live-activity", "tokens", "register", "--kind", "push-to-start", token,
                                      "--installation", "inst-\(i)", "--attributes-type", "RideAttributes"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let args = ["live-activity", "start", "--attributes-type", "RideAttributes", "--attributes", #"{"city":"Oslo"}"#,
                    "--content-state", #"{"eta":5}"#, "--title", "Ride", "--alert", "On its way", "--id", "ride-1", "--json"]
        var r = try await run(w, args)
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["id"]?.stringValue == "ride-1" && summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(3))
        #expect(try w.records().count == 3)
        // The same command again finds the stored job complete, says so as `pushctl broadcast --id` does, prints its
        // summary and sends nothing twice.
        r = try await run(w, args)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("broadcast ride-1 already completed; nothing sent") && !r.stderr.contains("resuming"), "\(r.stderr)")
        let again = try JSONValue(parsing: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(again["state"]?.stringValue == "completed" && again["accepted"] == .int(3) && again["sentThisRun"] == .int(0))
        #expect(try w.records().count == 3)
        let registry = try w.openRegistry()
        let job = try #require(try await registry.run { try $0.broadcast(id: "ride-1") })
        #expect(job.explicitTokens && job.pushType == .liveactivity && job.state == .completed)
    }

    @Test func theSimulatorsChannelLimitAndMissingCapabilityBecomeApplesReasons() async throws {
        var limited = try await World.make(tokens: 0, simulatorArgs: ["--max-channels", "1"])
        defer { limited.stop() }
        var r = try await run(limited, ["channels", "create"])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await run(limited, ["channels", "create"])
        #expect(r.status == 1 && r.stderr.contains("CannotCreateChannelConfig"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        r = try await run(limited, ["channels", "list", "--local"])
        #expect(r.stdout.split(separator: "\n").count == 1)  // only the channel APNs made is kept

        var disabled = try await World.make(tokens: 0, simulatorArgs: ["--broadcast-disabled", "com.example.app"])
        defer { disabled.stop() }
        r = try await run(disabled, ["channels", "create"])
        #expect(r.status == 1 && r.stderr.contains("FeatureNotEnabled"), "\(r.stderr)")
    }
}
