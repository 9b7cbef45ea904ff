import Foundation
import PushCore
import Testing
import func TestSupport.waitUntil

/// `pushctl broadcast` behaviours measured in time: `--rate` (the whole broadcast's, alone and with workers), a
/// second run joining a running one, the progress lines of a resumed run. Timing-sensitive, so `make test` runs
/// them after the parallel suites, one at a time, with the fault suites (`--filter "FaultTests|BroadcastTimingTests"
/// --no-parallel`): a saturated 2-core machine cannot keep any process to a schedule.
@Suite(.serialized, .timeLimit(.minutes(4))) struct BroadcastTimingTests {
    typealias World = BroadcastCommandTests.World

    /// The `progress:` lines a run printed on stderr (one every 5 s without a terminal, and one at the end).
    static func progressLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("progress: ") }
    }

    /// The whole broadcast's devices with an outcome, as a progress line says it (`progress: 1375/3000 done, …`).
    static func doneOverall(_ line: String) -> Int? {
        Int(line.dropFirst("progress: ".count).prefix { $0 != "/" })
    }

    @Test func rate500SendsThreeThousandDevicesInSixSecondsAloneAndWithTwoWorkersRunning() async throws {
        // Thirty shards, so the two workers really take part in the second broadcast.
        var w = try await World.make(tokens: 3000, shardSize: 100)
        defer { w.stop() }
        func broadcast(_ id: String) async throws -> (CLI.Result, Double) {
            let started = Date()
            let r = try await CLI.run(["broadcast", "--config", w.config, "--app", "example", "--id", id, "--alert", "a", "--rate", "500", "--json"])
            return (r, Date().timeIntervalSince(started))
        }
        let (alone, aloneSeconds) = try await broadcast("alone")
        #expect(alone.status == 0, "\(alone.stderr)")
        // Never faster than the rate: the process's whole run (a busy box only makes it longer).
        #expect(aloneSeconds >= 5.4, "alone: \(aloneSeconds) s")

        let workers = try (0..<2).map { _ in try CLI.startCapturing(["worker", "--config", w.config]) }
        defer { for worker in workers { worker.stop() } }
        let (shared, sharedSeconds) = try await broadcast("shared")
        #expect(shared.status == 0, "\(shared.stderr)")
        // The rate is the broadcast's: three processes together keep to 500/s.
        #expect(sharedSeconds >= 5.4, "with two workers: \(sharedSeconds) s")
        let summary = try JSONValue(parsing: shared.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["accepted"] == .int(3000))
        #expect(summary["workers"]?.objectPairs?.count == 3, "\(shared.stdout)")
        #expect(try w.received().count == 6000)
        // And not slower than it either: from the first notification APNs received to the last, each broadcast took
        // no more than its 6 s. Measured at the simulator, so the processes' start-up (which a busy box stretches,
        // and which the rate does not govern) is not counted; the sender itself keeps 500/s with room to spare.
        let times = try w.records().compactMap { $0["receivedAt"]?.intValue }
        #expect(times.count == 6000)
        for (name, part) in [("alone", times.prefix(3000)), ("with two workers", times.suffix(3000))] {
            let span = Double((part.max() ?? 0) - (part.min() ?? 0)) / 1000
            #expect(span <= 6.6, "\(name): the notifications reached APNs over \(span) s")
        }
    }

    @Test func aSecondRunWhileTheFirstHoldsTheOnlyShardJoinsItShowingLiveProgressAndWhomItWaitsFor() async throws {
        var w = try await World.make(tokens: 3000)  // one shard: the second run can only wait for the first
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "digest", "--alert", "a", "--rate", "300"]
        let first = try CLI.startCapturing(args)
        defer { first.stop() }
        try await waitUntil(deadline: .seconds(60), "300 received") { w.receivedCount() >= 300 || !first.isRunning }
        let second = try await CLI.run(args + ["--json"])
        let holder = "\(ProcessInfo.processInfo.hostName):\(first.process.processIdentifier)"
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("broadcast digest is running in \(holder): joining it"), "\(second.stderr)")
        // Its progress counts the first run's work as it goes (not frozen where it joined) and names whom it waits for.
        let lines = Self.progressLines(second.stderr)
        #expect(lines.contains { $0.contains("waiting for \(holder)") }, "\(lines)")
        let done = lines.compactMap(Self.doneOverall)
        #expect(done.count >= 2 && done.last == 3000 && done.first! < 3000, "\(lines)")
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed" && summary["sentThisRun"] == .int(0) && summary["accepted"] == .int(3000))
        try await first.exited()
        #expect(first.terminationStatus == 0, "\(first.stderrText)")
        #expect(try w.received().count == 3000)
    }

    @Test func aResumedRunsProgressLineKeepsTheWholeBroadcastApartFromThisProcesssPart() async throws {
        var w = try await World.make(tokens: 1000)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "resumed", "--alert", "a"]
        let first = try CLI.startCapturing(args + ["--rate", "200"])
        try await waitUntil(deadline: .seconds(60), "300 received") { w.receivedCount() >= 300 || !first.isRunning }
        first.interrupt()
        try await first.exited()
        #expect(first.terminationStatus == 130)
        let second = try await CLI.run(args + ["--json"])
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let sent = try #require(summary["sentThisRun"]?.intValue)
        #expect(sent > 0 && sent < 1000)
        // The last line: the whole broadcast done, and this process's part of it — not a total beside this run's counts.
        let last = try #require(Self.progressLines(second.stderr).last)
        #expect(last.hasPrefix("progress: 1000/1000 done,"), "\(last)")
        #expect(last.contains("(this process: \(sent) sent, accepted \(sent), not accepted 0, pruned 0)"), "\(last)")
    }
}
