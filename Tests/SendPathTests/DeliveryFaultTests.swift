import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore
import Testing
import TestSupport

/// The fault suite of "never lose a device": broadcasts of 5,000 devices (5% of them unregistered) through
/// the real engine, a real SQLite registry and the real simulator over TLS, under faults APNs produces. Each
/// scenario asserts that every live device was accepted at least once, that only the unregistered tokens
/// were pruned, that devices sent twice stay within the window per connection the server reset (at most a window
/// is in flight on a connection when it dies, and each of those may have been processed), and the run's state; and
/// prints one
/// `FAULT …` line with what it measured (lost, duplicates, duration).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DeliveryFaultTests {
    static let devices = 5000
    static let window = 500

    /// A fixture with 5,000 registered devices, every 20th unregistered at APNs.
    struct World {
        let f: BroadcastFixture
        let tokens: [DeviceToken]
        let dead: Set<DeviceToken>
        var live: Set<DeviceToken> { Set(tokens).subtracting(dead) }

        static func make(faults: SimulatorFaults = .init(), maxConcurrentStreams: Int = 1000) async throws -> World {
            let tokens = BroadcastFixture.tokens(DeliveryFaultTests.devices)
            var behaviour: [DeviceToken: DeviceBehaviour] = [:]
            let dead = Set(tokens.enumerated().filter { $0.offset % 20 == 7 }.map(\.element))
            for token in dead { behaviour[token] = .unregistered(timestampMs: nil) }
            let f = try await BroadcastFixture.start(faults: faults, devices: behaviour, maxConcurrentStreams: maxConcurrentStreams)
            try f.seed(DeliveryFaultTests.devices)
            return World(f: f, tokens: tokens, dead: dead)
        }

        /// Asserts the promise after the last run and prints the scenario's figures.
        func check(_ name: String, seconds: Double, _ report: BroadcastReport) throws {
            let copies = f.acceptedCopies()
            let lost = live.subtracting(copies.keys)
            let duplicates = copies.values.filter { $0 > 1 }.count
            // The storm resets a connection in each of its reset phases (GOAWAY'd streams are unprocessed and safe).
            // Two sessions measured 572 and 672 sent twice in it against a bound of one window for the whole run.
            let resets = f.simulator.counters.resets
            let bound = DeliveryFaultTests.window * max(1, resets)
            print("FAULT \(name): devices \(DeliveryFaultTests.devices), lost \(lost.count), sent twice \(duplicates) (window \(DeliveryFaultTests.window) × \(max(1, resets)) connection resets), flagged possibly duplicated \(report.counts.possiblyDuplicated), duration \(String(format: "%.1f", seconds)) s")
            #expect(lost.isEmpty, "\(name): \(lost.count) live devices never accepted")
            #expect(duplicates <= bound, "\(name): \(duplicates) sent twice, \(resets) connections reset")
            #expect(report.record.state == .completed)
            #expect(report.stop == nil)
            #expect(report.counts.done == report.record.total)
            #expect(report.counts.deferred == 0)
            #expect(report.counts.accepted == live.count)
            #expect(report.counts.pruned == dead.count)
            // No wrong prune: exactly the unregistered tokens are gone.
            let left = try Set(f.registry.list(app: "example", limit: 10_000).map(\.token))
            #expect(left == live)
            #expect(f.simulator.received.allSatisfy { $0.request.collapseId == report.record.id })
        }
    }

    /// Runs `id` until it completes without deferred devices (the documented way to finish deferred ones: the
    /// same id again), at most `runs` times.
    static func runToCompletion(_ w: World, _ id: String, runs: Int = 3, sender: @escaping () throws -> APNsSender) async throws -> BroadcastReport {
        var report = try await w.f.run(id, sender: try sender())
        var n = 1
        while n < runs, report.stop == nil, report.counts.deferred > 0 {
            report = try await w.f.run(id, sender: try sender())
            n += 1
        }
        return report
    }

    /// Injects `fault` once the simulator has accepted `count` notifications. The task's value is false when that
    /// did not happen within 60 s or before the task was cancelled (the test cancels it when the run ended): a run
    /// that ended before its fault then fails the test at once, instead of waiting for the suite's time limit.
    static func once(_ simulator: PushSimulator, accepted count: Int, _ fault: @escaping @Sendable () async -> Void) -> Task<Bool, Never> {
        Task {
            do {
                try await waitUntil(deadline: .seconds(60), every: .milliseconds(10), "\(count) devices were accepted") {
                    simulator.counters.accepted >= count
                }
            } catch {
                return false
            }
            await fault()
            return true
        }
    }

    @Test func apnsDownForTheFirstFiveSeconds() async throws {
        let w = try await World.make()
        try w.f.create(id: "down-5s")
        let simulator = w.f.simulator
        await simulator.suspend()
        let reviver = Task {
            try? await Task.sleep(for: .seconds(5))
            try? await simulator.resume()
        }
        let started = Date()
        let report = try await w.f.run("down-5s")
        _ = await reviver.value
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 5)
        #expect(report.counts.possiblyDuplicated == 0)  // nothing reached APNs while it was down
        try w.check("APNs down for the first 5 s", seconds: seconds, report)
        try await w.f.stop()
    }

    @Test func apnsRestartedMidRun() async throws {
        let w = try await World.make()
        try w.f.create(id: "restart")
        let simulator = w.f.simulator
        let restarter = Self.once(simulator, accepted: 1500) {
            await simulator.suspend()
            try? await Task.sleep(for: .seconds(3))  // the fault's length, not a wait for an event
            try? await simulator.resume()
        }
        let started = Date()
        let report = try await w.f.run("restart")
        restarter.cancel()  // a run that ended before the restart: stop waiting for it now
        #expect(await restarter.value, "the run ended before APNs was restarted")
        try w.check("APNs restarted mid-run (down 3 s)", seconds: Date().timeIntervalSince(started), report)
        try await w.f.stop()
    }

    @Test func tlsHandshakeResetOnTheFirstConnections() async throws {
        let w = try await World.make(faults: SimulatorFaults(resetHandshakes: 5))
        try w.f.create(id: "handshakes")
        let started = Date()
        let report = try await w.f.run("handshakes")
        #expect(w.f.simulator.counters.handshakeResets == 5)
        #expect(report.counts.possiblyDuplicated == 0)
        try w.check("TLS handshake reset on the first 5 connections", seconds: Date().timeIntervalSince(started), report)
        try await w.f.stop()
    }

    @Test func goawayResetThrottlingAndUnavailableTogether() async throws {
        // The simulator counts GOAWAY and reset per connection, so one connection meets only the first of the
        // two; they alternate every 600 accepted notifications, over 5% 429 and 2% 503 throughout.
        let throttled = SimulatorFaults(tooManyRequestsFraction: 0.05, serviceUnavailableFraction: 0.02)
        var goAway = throttled
        goAway.goAwayAfterStreams = 500
        var reset = throttled
        reset.resetAfterRequests = 700
        let w = try await World.make(faults: goAway)
        try w.f.create(id: "storm")
        let simulator = w.f.simulator
        let alternate = Task {
            var phase = 0
            while !Task.isCancelled {
                let next = (simulator.counters.accepted / 600 + 1) * 600
                while !Task.isCancelled, simulator.counters.accepted < next { try? await Task.sleep(for: .milliseconds(5)) }
                phase += 1
                simulator.faults = phase % 2 == 1 ? reset : goAway
            }
        }
        let started = Date()
        // On libcurl 7.88 (Debian 12's) this storm often leaves one request per GOAWAY'd connection hanging: the
        // simulator holds the first stream of the next connection with its HEADERS and none of its body (libcurl's
        // internal retry of a request refused by GOAWAY sends the request without its body), and the sender's
        // request timeout ends and retries it — nothing is lost. Measured 2026-12-02: 5 of 5 runs stalled on 7.88,
        // 0 of 4 on 8.14 (LD_LIBRARY_PATH=.build/curl8/...). docs/sending.md says what it costs in production. The
        // timeout is 15 s here, not the fixture's 60 s, so a stall costs this test seconds, not its time limit.
        let report = try await Self.runToCompletion(w, "storm") { try w.f.makeSender(requestTimeoutMs: 15_000) }
        alternate.cancel()
        let counters = simulator.counters
        #expect(counters.goAways > 0 && counters.resets > 0)
        #expect((counters.byStatus[429] ?? 0) > 0 && (counters.byStatus[503] ?? 0) > 0)
        try w.check("GOAWAY/500 + reset/700 + 5% 429 + 2% 503", seconds: Date().timeIntervalSince(started), report)
        try await w.f.stop()
    }

    @Test func anOutageLongerThanTheLimitInterruptsAndTheSameIdCompletes() async throws {
        let w = try await World.make()
        try w.f.create(id: "long-outage")
        let simulator = w.f.simulator
        // Down after 1,000 devices, for longer than the 2 s outage limit.
        let killer = Self.once(simulator, accepted: 1000) { await simulator.suspend() }
        let started = Date()
        let first = try await w.f.run("long-outage", sender: try w.f.makeSender(outageLimitMs: 2000))
        killer.cancel()  // a run that ended before the outage: stop waiting for it now
        #expect(await killer.value, "the run ended before APNs went down")
        guard case .endpoint(let stop) = first.stop else {
            Issue.record("expected an endpoint stop, got \(String(describing: first.stop))")
            return
        }
        #expect(stop.kind == .outage)
        #expect(stop.message.contains("unreachable"))
        #expect(first.record.state == .interrupted)
        #expect(first.record.error?.contains("unreachable") == true)
        #expect(first.counts.done < DeliveryFaultTests.devices)
        #expect(first.counts.done == first.counts.accepted + first.counts.notAccepted)
        #expect(first.counts.deferred == 0)  // nothing was made final or deferred by the outage
        try await simulator.resume()
        let second = try await w.f.run("long-outage")
        try w.check("outage longer than the limit, then the same id", seconds: Date().timeIntervalSince(started), second)
        try await w.f.stop()
    }
}
