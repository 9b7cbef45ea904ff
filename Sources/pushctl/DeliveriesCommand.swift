import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushctl deliveries`: the delivery log, newest first.
struct DeliveriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries",
        abstract: "Show the delivery history of an app, newest first.",
        discussion: """
            One row per notification with an outcome: time (finished, UTC), status (accepted, tokenDead, rejected, \
            deferred), APNs' reason, token, apns-id and the broadcast or send job. History older than \
            deliveryRetentionDays is deleted by `pushctl maintenance`, `serve` and `worker`. An app whose \
            deliveryLog is "failures" logs no accepted notifications (they are counted, not logged).
            """)

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "App id from the configuration.") var app: String
    @Option(name: .long, help: "Only this device token.") var token: String?
    @Option(name: .long, help: "Only this broadcast or send job id.") var broadcast: String?
    @Option(name: .long, help: "Only notifications finished at or after TIME (RFC 3339 or seconds since 1970).") var since: String?
    @Option(name: .long, help: "Only this outcome: accepted, tokenDead, rejected or deferred.") var status: String?
    @Option(name: .long, help: "At most N rows (default 100).") var limit = DeliveryQuery.defaultLimit
    @Flag(name: .long, help: "A JSON array of {token, status, reason, notificationId (also as apnsId, its deprecated name), broadcast, time, httpStatus, attempts, service}.") var json = false

    func run() throws {
        let config = try global.loadConfiguration()
        let settings: AppSettings
        do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        guard limit >= 1 else { throw CLIError.usage("--limit must be at least 1, not \(limit)") }
        var query: DeliveryQuery
        do {
            query = try DeliveryQuery.parse(
                app: app, token: token, broadcast: broadcast, since: since, status: status, limit: nil, cursor: nil,
                names: ["token": "--token", "broadcast": "--broadcast", "since": "--since", "status": "--status"])
        } catch {
            throw CLIError.usage(error.message)
        }
        let scope = config.deliveryLog(for: settings)
        if query.kind == .accepted, !scope.logs(.accepted, direct: false) {
            FileHandle.standardError.write(Data(("pushctl: note: " + Self.unloggedAccepted(app: app) + "\n").utf8))
        }
        let registry = try cli { () throws(StoreError) in try RegistryStores.open(config, options: .command) }
        var records: [DeliveryRecord] = []
        while records.count < limit {
            query.limit = min(DeliveryQuery.maxLimit, limit - records.count)
            let page = try cli { () throws(StoreError) in try registry.deliveries(query) }
            records += page.records
            guard let next = page.next else { break }
            query.after = next
        }
        if records.isEmpty, let id = query.broadcastId, query.kind != .accepted, !scope.logs(.accepted, direct: false) {
            // Only a header would say nothing: say why a job's rows may be missing.
            let job = try? registry.broadcast(id: id)
            let direct = job.map { DeliveryLogScope.isDirect(listedTokens: $0.explicitTokens, audience: $0.targeting?.audience) } ?? false
            if !direct {
                FileHandle.standardError.write(Data((
                    "pushctl: note: no rows for \(id): " + Self.unloggedAccepted(app: app)
                        + "; `pushctl jobs show \(id) --app \(app)` has its counts\n").utf8))
            }
        }
        let out = BufferedOutput()
        if json {
            out.write(JSONValue.array(records.map(\.historyJSON)).encodedString + "\n")
        } else {
            out.write(Self.table(records))
        }
        out.flush()
    }

    /// Why accepted notifications have no rows under the `failures` scope (one line, the one rule:
    /// ``DeliveryLogScope/isDirect(listedTokens:audience:)``).
    static func unloggedAccepted(app: String) -> String {
        "app \(app) logs failures only (deliveryLog: failures): accepted notifications of a send to all devices, a "
            + "channel or segments are counted, not logged; those sent to listed tokens or to a user are logged"
    }

    /// Aligned columns under a header; `-` for a missing reason or broadcast. The push service comes last, so
    /// the earlier columns stay where they were.
    static func table(_ records: [DeliveryRecord]) -> String {
        let header = ["TIME", "STATUS", "REASON", "TOKEN", "APNS-ID", "BROADCAST", "SERVICE"]
        let rows = records.map { r in
            [Timestamp.rfc3339(ms: r.finishedMs, milliseconds: true), r.kind?.rawValue ?? "-", r.reason ?? "-", r.token.hex, r.notificationId, r.broadcastId ?? "-",
             r.service.rawValue]
        }
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return ([header] + rows).map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
