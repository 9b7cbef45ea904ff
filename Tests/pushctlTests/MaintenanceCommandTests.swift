import Foundation
import PushCore
import PushStore
import Testing

/// Retention as operators run it, through the binary: `pushctl maintenance` (one pass, for cron) and the
/// passes `pushctl serve` and `pushctl worker` make when they start.
@Suite(.timeLimit(.minutes(2))) struct MaintenanceCommandTests {
    static let dayMs: Int64 = 86_400_000

    @Test func maintenanceDeletesHistoryOlderThanTheRetentionAndSaysWhat() async throws {
        let dir = try CLI.temporaryDirectory()
        let (config, database) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 10,"#)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try Registry(path: database).recordDeliveries([
            DeliveriesCommandTests.row(1, DeliveriesCommandTests.tokens[0], .accepted, 200, nil, nil, at: now - 12 * Self.dayMs),
            DeliveriesCommandTests.row(2, DeliveriesCommandTests.tokens[1], .accepted, 200, nil, nil, at: now - 11 * Self.dayMs),
            DeliveriesCommandTests.row(3, DeliveriesCommandTests.tokens[2], .accepted, 200, nil, nil, at: now - 9 * Self.dayMs),
        ])
        let first = try await CLI.run(["maintenance", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("(10 days) deleted: 2 delivery-log rows, 0 prune-log rows"), "\(first.stdout)")
        let left = try Registry(path: database).deliveries(DeliveryQuery(app: "example"))
        #expect(left.records.map(\.token) == [DeliveriesCommandTests.tokens[2]])
        let second = try await CLI.run(["maintenance", "--config", config])
        #expect(second.status == 0 && second.stdout.contains("deleted: 0 delivery-log rows"), "\(second.stdout)")
        // A retention out of range is a configuration error: exit 2, nothing deleted.
        let (bad, _) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 0,"#)
        let refused = try await CLI.run(["maintenance", "--config", bad])
        #expect(refused.status == 2 && refused.stderr.contains("deliveryRetentionDays must be between 1 and 3650"))
    }

    @Test(arguments: [["worker"], ["serve", "--port", "0"]])
    func serveAndWorkerTrimTheHistoryWhenTheyStart(_ command: [String]) async throws {
        let dir = try CLI.temporaryDirectory()
        // A production endpoint: `serve` starts no simulator (and loads no credentials: it only logs that).
        let (config, database) = try DeliveriesCommandTests.config(in: dir, extra: #""deliveryRetentionDays": 5,"#, endpoint: "production")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let registry = try Registry(path: database)
        try registry.recordDeliveries([
            DeliveriesCommandTests.row(1, DeliveriesCommandTests.tokens[0], .accepted, 200, nil, nil, at: now - 6 * Self.dayMs),
            DeliveriesCommandTests.row(2, DeliveriesCommandTests.tokens[1], .accepted, 200, nil, nil, at: now - 1000),
        ])
        let process = try CLI.startCapturing(command + ["--config", config])
        defer { if process.isRunning { process.terminate() } }
        let deadline = Date().addingTimeInterval(60)
        var left = try registry.deliveries(DeliveryQuery(app: "example")).records.count
        while left != 1 && Date() < deadline && process.isRunning {
            try await Task.sleep(for: .milliseconds(100))
            left = try registry.deliveries(DeliveryQuery(app: "example")).records.count
        }
        #expect(left == 1, "\(command): \(process.stderrText)")
        process.terminate()
        process.waitUntilExit()
        #expect(process.stderrText.contains("delivery history trimmed"), "\(process.stderrText)")
        #expect(process.stderrText.contains("deliveries=1"), "\(process.stderrText)")
    }
}
