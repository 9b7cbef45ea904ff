import PushSimulator
import Foundation
import PushCore
import PushDelivery
import PushSender
import Testing

/// A server that allows one concurrent stream (SETTINGS_MAX_CONCURRENT_STREAMS = 1; APNs starts new connections
/// low): every request but one waits for the stream, which takes a round trip per notification, so this suite
/// has a time limit of its own (3 minutes: it takes 20 s in make test's release build, 2026-12-01). Run serially with
/// the other fault suites (its name ends in FaultTests).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StreamLimitFaultTests {
    /// APNs starts a connection at a low stream limit: under a server that allows one stream at a time, transfers
    /// wait for the stream (in the transport or in libcurl) and a waiting transfer is neither timed out nor a
    /// transport error. Five broadcasts of the same 5,000 devices in a row (a stall hit about one run in three):
    /// each completes with nothing deferred, no transport error and no request sent twice.
    @Test func aOneStreamLimitCompletesFiveBroadcastsInARowWithNothingDeferred() async throws {
        let w = try await DeliveryFaultTests.World.make(maxConcurrentStreams: 1)
        for run in 1...5 {
            let id = "one-stream-\(run)"
            try w.f.create(id: id)
            let before = w.f.simulator.received.count
            let started = Date()
            let report = try await w.f.run(id)
            let seconds = Date().timeIntervalSince(started)
            let copies = w.f.simulator.received.dropFirst(before).reduce(into: [DeviceToken: Int]()) { $0[$1.request.token, default: 0] += 1 }
            print("FAULT one concurrent stream, run \(run) of 5: devices \(report.record.total), accepted \(report.counts.accepted), deferred \(report.counts.deferred), transport errors \(report.counts.notAcceptedByReason[APNsReason.transportErrorLabel] ?? 0), sent twice \(copies.values.filter { $0 > 1 }.count), duration \(String(format: "%.1f", seconds)) s")
            #expect(report.record.state == .completed, "run \(run)")
            #expect(report.stop == nil, "run \(run)")
            #expect(report.counts.deferred == 0, "run \(run): \(report.counts.notAcceptedByReason)")
            #expect(report.counts.notAcceptedByReason[APNsReason.transportErrorLabel] == nil, "run \(run)")
            #expect(report.counts.done == report.record.total, "run \(run)")
            // The first run prunes the unregistered devices; every later one reaches only live ones.
            #expect(report.counts.accepted == w.live.count, "run \(run)")
            #expect(report.counts.pruned == (run == 1 ? w.dead.count : 0), "run \(run)")
            #expect(report.counts.possiblyDuplicated == 0, "run \(run)")
            #expect(copies.values.allSatisfy { $0 == 1 }, "run \(run): a device sent twice")
        }
        try await w.f.stop()
    }
}
