import Foundation
import PushCore
import PushStore
import Testing

/// `pushctl deliveries`, run as the binary: the history table and JSON, its filters and bad options (exit 2
/// naming the option).
@Suite(.timeLimit(.minutes(2))) struct DeliveriesCommandTests {
    static let dayMs: Int64 = 86_400_000
    static let tokens = (1...3).map { try! DeviceToken(parsing: String(repeating: "0\($0)", count: 32)) }

    /// A config for app `example` (on `endpoint`) on a SQLite file in `dir`, with `extra` top-level JSON.
    static func config(in dir: URL, extra: String = "", endpoint: String = "simulator") throws -> (config: String, database: String) {
        let config = dir.appendingPathComponent("pushctl.json").path
        try """
            { "database": "registry.sqlite", \(extra)
              "apps": { "example": { "topic": "com.example.app", "endpoint": "\(endpoint)",
                                     "auth": {"p12": "client.p12", "passwordFile": "client.p12.password"} } } }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return (config, dir.appendingPathComponent("registry.sqlite").path)
    }

    static func row(_ n: Int64, _ token: DeviceToken, _ kind: DeliveryOutcome.Kind, _ status: Int, _ reason: String?, _ broadcast: String?, at ms: Int64,
                    service: PushService = .apns) -> DeliveryRecord {
        DeliveryRecord(app: "example", notificationId: "00000000-0000-0000-0000-00000000000\(n)", token: token, status: status, reason: reason,
                       attempts: 1, possiblyDuplicated: false, firstAttemptMs: ms - 10, finishedMs: ms, kind: kind, broadcastId: broadcast,
                       service: service)
    }

    @Test func theHistoryPrintsAsATableOrJSONNewestFirstWithFilters() async throws {
        let dir = try CLI.temporaryDirectory()
        let (config, database) = try Self.config(in: dir)
        let base: Int64 = 1_795_507_200_000  // 2026-11-24T08:00:00Z
        let rows = [
            Self.row(1, Self.tokens[0], .accepted, 200, nil, "digest", at: base + 1000),
            Self.row(2, Self.tokens[1], .tokenDead, 410, "Unregistered", "digest", at: base + 2000),
            Self.row(3, Self.tokens[0], .rejected, 400, "BadTopic", nil, at: base + 3000, service: .webpush),
        ]
        try await SQLiteRegistry(path: database).run { try $0.recordDeliveries(rows) }
        let table = try await CLI.run(["deliveries", "--config", config, "--app", "example"])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines.first == ["TIME", "STATUS", "REASON", "TOKEN", "APNS-ID", "BROADCAST", "SERVICE"])
        #expect(Array(lines.dropFirst()) == [
            ["2026-11-24T08:00:03.000Z", "rejected", "BadTopic", Self.tokens[0].hex, "00000000-0000-0000-0000-000000000003", "-", "webpush"],
            ["2026-11-24T08:00:02.000Z", "tokenDead", "Unregistered", Self.tokens[1].hex, "00000000-0000-0000-0000-000000000002", "digest", "apns"],
            ["2026-11-24T08:00:01.000Z", "accepted", "-", Self.tokens[0].hex, "00000000-0000-0000-0000-000000000001", "digest", "apns"],
        ])
        let json = try await CLI.run(["deliveries", "--config", config, "--app", "example", "--token", Self.tokens[0].hex, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try JSONValue(parsing: Array(json.stdout.utf8)) == .array([
            .object([("token", .string(Self.tokens[0].hex)), ("status", .string("rejected")), ("reason", .string("BadTopic")),
                     ("notificationId", .string("00000000-0000-0000-0000-000000000003")), ("apnsId", .string("00000000-0000-0000-0000-000000000003")), ("broadcast", .null),
                     ("time", .string("2026-11-24T08:00:03.000Z")), ("httpStatus", .int(400)), ("attempts", .int(1)),
                     ("service", .string("webpush"))]),
            .object([("token", .string(Self.tokens[0].hex)), ("status", .string("accepted")), ("reason", .null),
                     ("notificationId", .string("00000000-0000-0000-0000-000000000001")), ("apnsId", .string("00000000-0000-0000-0000-000000000001")), ("broadcast", .string("digest")),
                     ("time", .string("2026-11-24T08:00:01.000Z")), ("httpStatus", .int(200)), ("attempts", .int(1)),
                     ("service", .string("apns"))]),
        ]))
        func count(_ args: [String]) async throws -> Int {
            let r = try await CLI.run(["deliveries", "--config", config, "--app", "example", "--json"] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            guard case .array(let items) = try JSONValue(parsing: Array(r.stdout.utf8)) else { return -1 }
            return items.count
        }
        #expect(try await count(["--broadcast", "digest"]) == 2)
        #expect(try await count(["--status", "tokenDead"]) == 1)
        #expect(try await count(["--since", "2026-11-24T08:00:02Z"]) == 2)
        #expect(try await count(["--since", "1795507203"]) == 1)
        #expect(try await count(["--limit", "2"]) == 2)
        #expect(try await count(["--app", "example", "--broadcast", "nope"]) == 0)
        for (args, option) in [(["--since", "soon"], "--since"), (["--status", "lost"], "--status"), (["--token", "zz"], "--token"),
                               (["--limit", "0"], "--limit")] {
            let r = try await CLI.run(["deliveries", "--config", config, "--app", "example"] + args)
            #expect(r.status == 2 && r.stderr.hasPrefix("pushctl: \(option)") && r.stdout.isEmpty, "\(args): \(r.stderr)")
        }
        let unknown = try await CLI.run(["deliveries", "--config", config, "--app", "nope"])
        #expect(unknown.status == 2 && unknown.stderr.contains("configured apps: example"))
    }
}
