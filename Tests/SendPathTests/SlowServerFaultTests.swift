import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import Testing

/// A server that is the bottleneck: the simulator answers 1,000 requests a second in all, one answer per write
/// (``SimulatorFaults/answersPerSecond``), and the window keeps 1,000 on the wire, so answers wait ~1 s in its queue
/// and trickle in one by one — the case where the transport holds reads to read answers in batches (``ReadCadence``,
/// up to half the server's queue). Holding must cost nothing but CPU saved: the broadcast completes with every device
/// answered once, nothing deferred, no transport error (no held answer ran into the request timeout), and the
/// unregistered devices pruned. The CPU it saves is a benchmark's (bench/bench_slow_server.sh), not this test's.
/// Serial with the other fault suites (its name ends in FaultTests).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SlowServerFaultTests {
    static let devices = 3000
    static let rate = 1000.0

    @Test func aServerAnsweringOneByOneAtItsOwnRateGetsEveryDeviceOnceAndNothingDeferred() async throws {
        let tokens = BroadcastFixture.tokens(Self.devices)
        var behaviour: [DeviceToken: DeviceBehaviour] = [:]
        for token in tokens.enumerated().filter({ $0.offset % 20 == 7 }).map(\.element) {
            behaviour[token] = .unregistered(timestampMs: nil)
        }
        var faults = SimulatorFaults()
        faults.answersPerSecond = Self.rate
        let f = try await BroadcastFixture.start(faults: faults, devices: behaviour)
        try f.seed(Self.devices)
        try f.create(id: "slow")
        let started = Date()
        // A request timeout of 5 s: the ~1 s queue plus a hold must stay well inside it.
        let report = try await f.run("slow", sender: try f.makeSender(window: 1000, requestTimeoutMs: 5000))
        let seconds = Date().timeIntervalSince(started)
        let copies = f.simulator.received.reduce(into: [DeviceToken: Int]()) { $0[$1.request.token, default: 0] += 1 }
        let transportErrors = report.counts.notAcceptedByReason[APNsReason.transportErrorLabel] ?? 0
        print("FAULT slow server \(Int(Self.rate))/s: devices \(report.record.total), accepted \(report.counts.accepted), deferred \(report.counts.deferred), transport errors \(transportErrors), pruned \(report.counts.pruned), sent twice \(copies.values.filter { $0 > 1 }.count), duration \(String(format: "%.1f", seconds)) s (the server's rate alone: \(String(format: "%.1f", Double(Self.devices) / Self.rate)) s)")
        #expect(report.record.state == .completed)
        #expect(report.stop == nil)
        #expect(report.counts.deferred == 0, "\(report.counts.notAcceptedByReason)")
        #expect(transportErrors == 0)
        #expect(report.counts.done == Self.devices)
        #expect(report.counts.accepted == Self.devices - behaviour.count)
        #expect(report.counts.pruned == behaviour.count)
        #expect(report.counts.possiblyDuplicated == 0)
        // The simulator keeps what it delivered: each live device once.
        #expect(copies.count == Self.devices - behaviour.count, "\(copies.count) devices delivered")
        #expect(copies.values.allSatisfy { $0 == 1 }, "a device sent twice")
        try await f.stop()
    }
}
