import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// `--at` on `pushctl send` and `pushctl broadcast`, and `pushctl jobs list|show|cancel`, run as a user would:
/// real processes, a real simulator process, a real database file, the wall clock.
@Suite(.timeLimit(.minutes(2))) struct JobsCommandTests {
    typealias World = BroadcastCommandTests.World

    static func rfc3339(secondsFromNow: Double) -> String {
        Timestamp.rfc3339(ms: Int64((Date().timeIntervalSince1970 + secondsFromNow) * 1000))
    }

    @Test func aBroadcastWithAtIsStoredAndAWorkerSendsItOnlyOnceItsTimeComes() async throws {
        var w = try await World.make(tokens: 40)
        defer { w.stop() }
        // 15 s ahead: the command must store it before its time for stderr to name it ("at …", not "now (its time has
        // passed)"), and in a fresh-clone CI run's parallel phase `broadcast --at` once took more than 4 s to get there.
        let at = Self.rfc3339(secondsFromNow: 15)
        let atMs = try Timestamp.parse(at)
        let stored = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "digest", "--alert", "Morning", "--at", at])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout == "digest\n")
        #expect(stored.stderr.contains("scheduled") && stored.stderr.contains(at))
        // The same command again does not store it twice.
        let again = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "digest", "--alert", "Morning", "--at", at])
        #expect(again.status == 0 && again.stderr.contains("already stored"))
        let listed = try await CLI.run(["jobs", "list", "--config", w.config, "--app", "example", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let job = try JSONValue(parsing: listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(job["id"]?.stringValue == "digest" && job["state"]?.stringValue == "pending" && job["at"]?.stringValue == at)
        // A worker is running, but nothing goes out before the time.
        let worker = try CLI.startCapturing(["worker", "--config", w.config])
        try await waitUntil(deadline: .seconds(60), "40 received") { w.receivedCount() >= 40 || !worker.isRunning }
        let registry = try w.openRegistry()
        try await waitUntil(deadline: .seconds(60), "job digest completed") {
            try await registry.run({ try $0.broadcast(id: "digest") })?.state == .completed
        }
        worker.terminate()
        try await worker.exited()
        #expect(worker.terminationStatus == 0, "\(worker.stderrText)")
        #expect(worker.stderrText.contains("started scheduled job digest"))
        // The simulator stamps each notification as it receives it (same machine, same clock).
        let first = try #require(try w.records().compactMap { $0["receivedAt"]?.intValue }.min())
        #expect(first >= atMs, "sent \(atMs - first) ms before its time")
        #expect(Set(try w.received()).count == 40)
        let shown = try await CLI.run(["jobs", "show", "digest", "--config", w.config, "--app", "example"])
        let status = try JSONValue(parsing: shown.stdout)
        #expect(status["state"]?.stringValue == "completed" && status["accepted"] == .int(40) && status["at"]?.stringValue == at)
    }

    @Test func aScheduledSendCancelledBeforeItsTimeNeverGoesOut() async throws {
        var w = try await World.make(tokens: 3)
        defer { w.stop() }
        let at = Self.rfc3339(secondsFromNow: 2)
        let stored = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", World.token(1),
                                        "--alert", "Sale", "--at", at, "--id", "promo"])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(stored.stdout == "promo\n")
        let cancel = try await CLI.run(["jobs", "cancel", "promo", "--config", w.config, "--app", "example"])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(cancel.stdout.contains("job promo cancelled"))
        // A control send due a second after the cancelled one: once it arrives, the worker was running and had
        // passed the cancelled job's time, so its absence means something (not that the worker started late).
        let control = try await CLI.run(["send", "--config", w.config, "--app", "example", "--token", World.token(2),
                                         "--alert", "Control", "--at", Self.rfc3339(secondsFromNow: 3), "--id", "control"])
        #expect(control.status == 0, "\(control.stderr)")
        let worker = try CLI.startCapturing(["worker", "--config", w.config])
        try await waitUntil(deadline: .seconds(60), "the control send arrived") { try w.received().contains(World.token(2)) || !worker.isRunning }
        worker.terminate()
        try await worker.exited()
        #expect(try w.received() == [World.token(2)], "the cancelled send went out")
        let list = try await CLI.run(["jobs", "list", "--config", w.config, "--app", "example", "--state", "cancelled"])
        #expect(list.status == 0)
        let rows = list.stdout.split(separator: "\n")
        #expect(rows.count == 2 && rows[1].hasPrefix("promo\tcancelled\t\(at)\t"))
        // Cancelling again is fine; an unknown id is exit 1.
        #expect(try await CLI.run(["jobs", "cancel", "promo", "--config", w.config, "--app", "example"]).status == 0)
        let unknown = try await CLI.run(["jobs", "cancel", "nope", "--config", w.config, "--app", "example"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no job nope"))
    }

    @Test func cancellingARunningBroadcastStopsTheProcessRunningIt() async throws {
        var w = try await World.make(tokens: 1500, delayMs: 100, shardSize: 500)
        defer { w.stop() }
        // 100/s: 15 s for the whole broadcast, so a `jobs cancel` process that starts slowly on a loaded machine (a CI
        // run's parallel phase once took more than the 5 s that 300/s left it) still lands while devices remain.
        let run = try CLI.startCapturing(["broadcast", "--config", w.config, "--app", "example", "--id", "oops", "--alert", "a", "--rate", "100"])
        try await waitUntil(deadline: .seconds(60), "100 received") { w.receivedCount() >= 100 || !run.isRunning }
        let cancel = try await CLI.run(["jobs", "cancel", "oops", "--config", w.config, "--app", "example"])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        try await run.exited()
        #expect(run.terminationStatus == 1)
        #expect(run.stderrText.contains("broadcast oops was cancelled"))
        let sent = w.receivedCount()
        #expect(sent < 1500)
        // A window in which a cancelled broadcast would (wrongly) go on sending: that nothing arrives is the test.
        // The process has exited, so it stays short: three times the simulator's 100 ms answer delay.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try w.received().count == sent)
        #expect(try await w.openRegistry().run { try $0.broadcast(id: "oops") }?.state == .cancelled)
        // Running the same command again does not resume it.
        let again = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", "oops", "--alert", "a"])
        #expect(again.status == 1 && again.stderr.contains("was cancelled"))
        #expect(try w.received().count == sent)
    }

    @Test func badTimesAndOptionMixesAreUsageErrorsAndStoreNothing() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let t = World.token(0)
        for args in [
            ["send", "--token", t, "--alert", "x", "--at", "tomorrow"],
            ["send", "--token", t, "--alert", "x", "--at", "2026-12-01T08:00:00"],
            ["send", "--token", t, "--alert", "x", "--id", "x"],
            ["send", "--token", t, "--alert", "x", "--at", Self.rfc3339(secondsFromNow: 60), "--outage-limit", "5"],
            ["broadcast", "--alert", "x", "--at", Self.rfc3339(secondsFromNow: 60), "--rate", "5"],
            ["broadcast", "--alert", "x", "--at", Self.rfc3339(secondsFromNow: 60), "--detach"],
            ["jobs", "list", "--state", "done"],
        ] {
            let words = args[0] == "jobs" ? 2 : 1
            let r = try await CLI.run(Array(args.prefix(words)) + ["--config", w.config, "--app", "example"] + Array(args.dropFirst(words)))
            #expect(r.status == 2, "\(args)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        #expect(try await w.openRegistry().run { try $0.broadcasts(app: nil, states: BroadcastState.allCases) }.isEmpty)
    }
}
