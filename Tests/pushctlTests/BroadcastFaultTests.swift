import Foundation
import PushCore
import TestSupport
import PushStore
import Testing

/// The fault suite's `pushctl broadcast` scenarios (5,000 devices each, real processes): kill -9 and resume, an
/// APNs outage longer than the limit, refused credentials. Run by `make test` after the other suites, one
/// test at a time (`--filter FaultTests --no-parallel`), so their load does not starve timing-sensitive tests.
@Suite(.serialized, .timeLimit(.minutes(4))) struct BroadcastFaultTests {
    typealias World = BroadcastCommandTests.World

    @Test(arguments: ["sqlite", "postgres"])
    func killMinus9ThenResumeSendsAtMostTwiceTheWindowAgainAllCarryingTheCollapseId(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("kill") : "registry.sqlite"
        var w = try await World.make(tokens: 5000, database: database)
        defer { w.stop() }
        // --rate paces the run, so the kill lands while most devices are still to come.
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "digest-test", "--alert", "Digest", "--json", "--rate", "1000"]
        let started = Date()
        let first = try CLI.start(args)
        // Kill it hard once a good part has been delivered (outcomes are committed as they come back).
        let registry = try w.openRegistry()
        try await waitUntil(deadline: .seconds(120), "1000 devices done") {
            if !first.isRunning { return true }
            return ((try? await registry.run({ try $0.broadcastCounts(id: "digest-test") }))?.done ?? 0) >= 1000
        }
        #expect(first.isRunning, "the broadcast ended (status \(first.isRunning ? -1 : first.terminationStatus)) before it could be killed")
        kill(first.processIdentifier, SIGKILL)
        try await first.exited()
        let beforeKill = try w.received()

        // The same cron line again: it takes over the dead run's lease and resumes.
        let second = try await CLI.run(args, timeout: 180)
        #expect(second.status == 0, "\(second.stderr)")
        guard second.status == 0 else { return }
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["done"] == .int(5000))  // every token ends with exactly one outcome
        #expect(summary["total"] == .int(5000))
        #expect(summary["accepted"] == .int(5000))
        // Each worker is credited with what it settled: the killed run with what its checkpoint passed (and rows it
        // wrote), the resume with the rest — together every device once, whatever the killed run had sent.
        let credited = summary["workers"]?.objectPairs?.reduce(0) { $0 + ($1.1.intValue ?? 0) }
        #expect(credited == 5000, "\(String(describing: summary["workers"]))")
        #expect(summary["workers"]?.objectPairs?.count == 2)

        let all = try w.received()
        var copies: [String: Int] = [:]
        for token in all { copies[token, default: 0] += 1 }
        #expect(copies.count == 5000)
        let twice = copies.values.filter { $0 > 1 }.count
        // Only the ahead window at the kill (twice the in-flight window: sent, or answered but not committed behind
        // the checkpoint) may repeat, every repeat is reported as possibly duplicated, and each carries the
        // broadcast's collapse id, so the device shows it once.
        let flagged = Int(summary["possiblyDuplicated"]?.intValue ?? 0)
        #expect(twice <= 2 * 500)
        #expect(twice <= flagged)
        #expect(Set(beforeKill).count == beforeKill.count)
        #expect(try w.records().allSatisfy { $0["collapseId"]?.stringValue == "digest-test" })
        print("FAULT kill -9 then resume (pushctl broadcast, \(backend)): devices 5000, lost \(5000 - copies.count), sent twice \(twice) (bound 1000: twice the window of 500), flagged possibly duplicated \(flagged), duration \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        // Cron fires again: a completed id is not sent twice.
        let third = try await CLI.run(args)
        #expect(third.status == 0)
        #expect(third.stderr.contains("already completed"))
        #expect(try w.received().count == all.count)
    }

    /// What a killed run left in the store: its shard's checkpoint and dispatch mark, and the devices it left rows
    /// to send again (pending: held while they waited).
    struct LeftBehind {
        var checkpoint: String
        var dispatched: String
        var pending: Set<String>

        init(_ registry: any RegistryStore, id: String) throws {
            let store = registry.deliveryStore
            let shards = try store.shards(id: id)
            guard shards.count == 1, let shard = shards.first else { throw BroadcastCommandTests.Failure("expected one shard, found \(shards.count)") }
            checkpoint = shard.checkpoint
            dispatched = shard.dispatched
            pending = Set(try store.storedOutcomes(id: id, after: "", through: BroadcastShard.keySpaceEnd)
                .filter { $0.value.kind == .pending }.keys)
        }

        /// May `token` have been sent before the kill and be sent again by the resume?
        func mayRepeat(_ token: String) -> Bool { (token > checkpoint && token <= dispatched) || pending.contains(token) }
    }

    /// A kill -9 while a fifth of the devices answer 429 every time (each waits seconds in backoff, five attempts):
    /// the checkpoint does not stall behind them — they are held with rows of their own — so the resume sends again
    /// only devices between the checkpoint and the dispatch mark, or held, each at most once more, at most twice
    /// the window of them, and every count is exact.
    @Test(arguments: ["sqlite", "postgres"])
    func killMinus9DuringA429StormResendsOnlyPastTheCheckpointOnceWithExactCounts(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("storm") : "registry.sqlite"
        let storm = (0..<5000).filter { $0 % 5 == 0 }.map(World.token)
        let devices = "[" + storm.map { #"{"token": "\#($0)", "state": "tooManyRequests"}"# }.joined(separator: ",") + "]"
        var w = try await World.make(tokens: 5000, devices: devices, database: database)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "storm", "--alert", "Digest", "--json", "--rate", "1000"]
        let started = Date()
        let first = try CLI.start(args)
        let registry = try w.openRegistry()
        try await waitUntil(deadline: .seconds(120), "1500 accepted") {
            if !first.isRunning { return true }
            return ((try? await registry.run({ try $0.broadcastCounts(id: "storm") }))?.accepted ?? 0) >= 1500
        }
        #expect(first.isRunning, "the broadcast ended before it could be killed")
        kill(first.processIdentifier, SIGKILL)
        try await first.exited()
        let left = try LeftBehind(registry, id: "storm")
        let before = try w.received()
        // The checkpoint went past devices still in backoff (held), and the mark stays within the ahead window (twice
        // the window of 500) of it plus the two mark steps (half a window each) it may lead by.
        #expect(!left.pending.isEmpty && left.pending.isSubset(of: Set(storm)))
        let gap = (0..<5000).map(World.token).filter { $0 > left.checkpoint && $0 <= left.dispatched }.count
        #expect(gap <= 2 * 500 + 2 * (500 / 2), "\(gap) devices between the checkpoint and the dispatch mark")

        let second = try await CLI.run(args, timeout: 240)
        #expect(second.status == 1, "\(second.stderr)")  // completed with deferred devices
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["done"] == .int(5000) && summary["total"] == .int(5000))
        #expect(summary["accepted"] == .int(4000) && summary["deferred"] == .int(1000))
        let counts = try await registry.run { try $0.broadcastCounts(id: "storm") }
        #expect(counts.done == 5000 && counts.accepted == 4000 && counts.deferred == 1000)
        #expect(counts.notAcceptedByReason == ["TooManyRequests": 1000])

        let all = try w.received()
        var copies: [String: Int] = [:]
        for token in all { copies[token, default: 0] += 1 }
        #expect(Set(copies.keys) == Set((0..<5000).map(World.token)).subtracting(storm))
        let twice = copies.filter { $0.value > 1 }
        #expect(twice.values.allSatisfy { $0 == 2 })
        #expect(twice.keys.allSatisfy(left.mayRepeat), "sent again outside the checkpoint's gap: \(twice.keys.filter { !left.mayRepeat($0) }.prefix(5))")
        #expect(twice.count <= 2 * 500)
        #expect(Set(before).count == before.count)
        print("FAULT kill -9 during a 429 storm then resume (pushctl broadcast, \(backend)): devices 5000, lost 0, sent twice \(twice.count) (bound 1000), gap at the kill \(gap), held \(left.pending.count), duration \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// A kill -9 while APNs is down (the simulator stopped mid-run: the window waits, the checkpoint lags): after
    /// APNs is back the resume sends every device, only those between the checkpoint and the dispatch mark (or
    /// held) possibly twice, and the counts are exact.
    @Test(arguments: ["sqlite", "postgres"])
    func killMinus9DuringAnAPNsOutageResendsOnlyPastTheCheckpointOnceWithExactCounts(_ backend: String) async throws {
        let database = backend == "postgres" ? try await PostgresTestServer.shared().makeDatabase("outagekill") : "registry.sqlite"
        var w = try await World.make(tokens: 5000, database: database)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "dark", "--alert", "Digest", "--json", "--rate", "1000"]
        let first = try CLI.start(args)
        let registry = try w.openRegistry()
        try await waitUntil(deadline: .seconds(120), "1500 devices done") {
            if !first.isRunning { return true }
            return ((try? await registry.run({ try $0.broadcastCounts(id: "dark") }))?.done ?? 0) >= 1500
        }
        #expect(first.isRunning, "the broadcast ended before APNs went down")
        w.stopSimulator()
        try await Task.sleep(for: .milliseconds(1500))  // the outage's length: the behaviour under test
        #expect(first.isRunning, "the broadcast ended during the outage")
        kill(first.processIdentifier, SIGKILL)
        try await first.exited()
        let left = try LeftBehind(registry, id: "dark")
        let countsAtKill = try await registry.run { try $0.broadcastCounts(id: "dark") }
        try await w.startSimulator()
        let second = try await CLI.run(args, timeout: 240)
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["done"] == .int(5000) && summary["accepted"] == .int(5000) && summary["total"] == .int(5000))
        let all = try w.received()
        var copies: [String: Int] = [:]
        for token in all { copies[token, default: 0] += 1 }
        #expect(copies.count == 5000)
        let twice = copies.filter { $0.value > 1 }
        #expect(twice.values.allSatisfy { $0 == 2 })
        #expect(twice.keys.allSatisfy(left.mayRepeat), "sent again outside the checkpoint's gap: \(twice.keys.filter { !left.mayRepeat($0) }.prefix(5))")
        #expect(twice.count <= 2 * 500)
        #expect(countsAtKill.done <= 5000 - twice.count)
        print("FAULT kill -9 during an APNs outage then resume (pushctl broadcast, \(backend)): devices 5000, lost 0, sent twice \(twice.count) (bound 1000), counted at the kill \(countsAtKill.done)")
    }

    @Test func anOutageLongerThanTheLimitExitsFiveAndTheSameCommandCompletes() async throws {
        var w = try await World.make(tokens: 5000, startSimulator: false)
        defer { w.stop() }
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "outage", "--alert", "a", "--json", "--outage-limit", "2"]
        let started = Date()
        let first = try await CLI.run(args, timeout: 60)
        #expect(first.status == 5, "\(first.stderr)")
        #expect(first.stderr.contains("unreachable"))
        #expect(first.stderr.contains("run the same command again to resume"))
        #expect(!first.stderr.contains("credentials"))
        let registry = try SQLiteRegistry(path: w.dir.appendingPathComponent("registry.sqlite").path)
        #expect(try await registry.run { try $0.broadcast(id: "outage") }?.state == .interrupted)
        #expect(try await registry.run { try $0.broadcastCounts(id: "outage") }.done == 0)  // nothing final, nothing deferred
        try await w.startSimulator()
        let second = try await CLI.run(args, timeout: 180)
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["state"]?.stringValue == "completed")
        #expect(summary["accepted"] == .int(5000))
        #expect(summary["possiblyDuplicated"] == .int(0))
        let received = try w.received()
        #expect(Set(received).count == 5000 && received.count == 5000)
        print("FAULT outage longer than the limit (pushctl broadcast, exit 5), then the same command: devices 5000, lost 0, sent twice \(received.count - Set(received).count) (window 500), duration \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    @Test func refusedCredentialsExitThreeNamingTheCauseAndTheSameCommandCompletesOnceFixed() async throws {
        // The simulator plays production while the certificate is a development one: 403 BadCertificateEnvironment.
        var w = try await World.make(tokens: 5000, startSimulator: false)
        defer { w.stop() }
        try await w.startSimulator(["--environment", "production"])
        let args = ["broadcast", "--config", w.config, "--app", "example", "--id", "creds", "--alert", "a", "--json"]
        let first = try await CLI.run(args, timeout: 60)
        #expect(first.status == 3, "\(first.stderr)")
        #expect(first.stderr.contains("BadCertificateEnvironment"))
        #expect(first.stderr.contains("fix the credentials"))
        let registry = try SQLiteRegistry(path: w.dir.appendingPathComponent("registry.sqlite").path)
        #expect(try await registry.run { try $0.broadcast(id: "creds") }?.state == .interrupted)
        #expect(try await registry.run { try $0.broadcastCounts(id: "creds") }.done == 0)
        // Fixed (here: APNs and certificate agree on the environment): the same command completes.
        w.stopSimulator()
        try await w.startSimulator()
        let second = try await CLI.run(args, timeout: 180)
        #expect(second.status == 0, "\(second.stderr)")
        let summary = try JSONValue(parsing: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["accepted"] == .int(5000))
        #expect(Set(try w.received()).count == 5000)
    }
}
