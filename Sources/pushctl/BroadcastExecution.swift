import Foundation
import PushCore
import PushDelivery
import PushSender
import PushStore

/// Runs a stored broadcast or send job to its end in this process (`pushctl broadcast`, `pushctl live-activity
/// start --id`): progress on stderr, the summary on stdout, and the documented exit codes. The same id again
/// resumes it.
struct BroadcastExecution {
    /// The app.
    var app: String
    /// The summary as JSON.
    var json: Bool

    /// Does what ``RunAgain`` decided for a stored id (`pushctl broadcast --id`, `pushctl live-activity start --id`):
    /// a refusal exits with its code (a cancelled id 1, another job under it 2); a completed one with no deferred
    /// devices is not sent again (its summary is printed, exit 0); a completed one with deferred devices retries them;
    /// one that another process is running is joined (this command works on the shards nobody holds, shows the
    /// whole broadcast's progress and whom it waits for, takes over the shards of a process that dies or stops, and
    /// returns when every shard is finished); an interrupted one resumes. True when it must run.
    /// `summary` false (`--detach`, whose stdout is the id alone) prints no summary for a completed one.
    func act(on decision: RunAgain.Decision, _ existing: BroadcastRecord, registry: any RegistryStore, summary: Bool = true) throws -> Bool {
        let id = existing.id
        switch decision {
        case .refuse(let refusal):
            throw CLIError(code: refusal.exitCode, message: refusal.message)
        case .create:
            return true
        case .wait:
            printError("job \(id) is already stored (\(existing.state.rawValue)); it waits for its time")
            return false
        case .done:
            let counts = try cli { () throws(StoreError) in try registry.broadcastCounts(id: id) }
            printError("broadcast \(id) already completed; nothing sent")
            guard summary else { return false }
            let workers = (try? registry.deliveryStore.workers(id: id)) ?? [:]
            printSummary(BroadcastReport(record: existing, counts: counts, workers: workers))
            return false
        case .retryDeferred(let deferred):
            printError("broadcast \(id): retrying \(deferred) deferred devices")
        case .join:
            let holders = Self.holders(of: id, registry: registry)
            printError("broadcast \(id) is running in \(holders.joined(separator: ", ")): joining it (this command returns when every shard is finished)")
        case .resume:
            printError("broadcast \(id): resuming (\(existing.state.rawValue))")
        }
        return true
    }

    /// Looks `id` up and decides with ``RunAgain`` for a request to run `wanted` now; nil when the id is free. A
    /// local-time job under the id is refused (cancelled: exit 1; otherwise another job: exit 2).
    @available(*, noasync, message: "blocks on the database: call it inside run { }")
    static func decide(
        id: String, app: String, wanted: BroadcastRecord, registry: any RegistryStore
    ) throws(StoreError) -> (decision: RunAgain.Decision, existing: BroadcastRecord?)? {
        let now = try registry.clockMs()
        guard var lookup = try registry.runAgainFound(id: id, app: app, wanted: .job(wanted), nowMs: now) else { return nil }
        var existing: BroadcastRecord?
        if case .job(let record) = lookup.stored {
            existing = record
            if record.state == .running { lookup.found.heldElsewhere = !holders(of: id, registry: registry).isEmpty }
        }
        return (RunAgain.decide(id: id, found: lookup.found, request: .run), existing)
    }

    /// The processes (`host:pid`) holding a live claim on one of the broadcast's shards (``ShardLease``).
    static func holders(of id: String, registry: any RegistryStore) -> [String] {
        (try? registry.deliveryStore.holders(of: id)) ?? []
    }

    func run(id: String, config: PushConfiguration, settings: AppSettings, registry: any RegistryStore) async throws {
        var engine = BroadcastConfiguration(config)
        // Waiting for other processes' last shards: look every 200 ms (on SQLite nothing wakes a waiter sooner), so
        // the command returns soon after the broadcast completes.
        engine.pollMs = 200
        let store = registry.deliveryStore
        let broadcaster = Broadcaster(store: store, configuration: engine)
        // Never a sender with its breakers reset by an outage: an unreadable state fails the command (exit 5).
        let app = self.app
        let breakers = try await registry.run { try $0.breakerStates(app: app) }
        let sender: any DeliverySender
        do {
            sender = try await SenderFactory.make(config: config, settings: settings, breakers: breakers)
        } catch let error as CLIError {
            // Best effort: the command fails with the credentials' error either way.
            let message = error.message
            _ = try? await registry.run { try $0.noteStopped(id: id, error: message) }
            throw error
        }
        let stop = StopFlag()
        let signals = SignalWatcher { stop.raise(signal: $0) }
        defer { signals.cancel() }
        let tty = isatty(STDERR_FILENO) == 1
        let report: BroadcastReport
        do {
            report = try await broadcaster.run(
                id: id, sender: sender, stop: stop, progressInterval: tty ? 0.25 : 5,
                progress: { Self.showProgress($0, tty: tty) })
        } catch {
            await sender.shutdown()
            throw CLIError(code: 5, message: error.message)
        }
        await sender.shutdown()
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        printSummary(report)
        if report.record.state == .cancelled {
            throw CLIError(code: 1, message: "broadcast \(id) was cancelled (\(report.counts.done) devices had an outcome; the others are not sent to)")
        }
        if let stop = report.stop {
            let resume = "; run the same command again to resume"
            switch stop {
            case .signal(let n): throw CLIError(code: n == SIGTERM ? 143 : 130, message: "broadcast \(id) interrupted\(resume)")
            case .leaseLost(let message): throw CLIError(code: 5, message: "broadcast \(id) stopped: \(message)")
            case .endpoint(let endpointStop) where endpointStop.kind == .credentials:
                throw CLIError(code: 3, message: "broadcast \(id) interrupted: \(endpointStop.message); fix the credentials, then\(resume.dropFirst(1))")
            case .endpoint(let endpointStop):
                throw CLIError(code: 5, message: "broadcast \(id) interrupted: \(endpointStop.message)\(resume)")
            case .store(let message):
                throw CLIError(code: 5, message: "broadcast \(id) interrupted: the database is unavailable: \(message)\(resume)")
            }
        }
        if !report.breakerTripped.isEmpty {
            throw CLIError(code: 1, message: "pruning breaker tripped for \(report.breakerTripped.joined(separator: ", ")): BadDeviceToken storm, tokens kept (sandbox/production mix-up?)")
        }
        if report.counts.deferred > 0 {
            throw CLIError(code: 1, message: "\(report.counts.deferred) devices deferred after transient failures; run the same command again to retry them")
        }
        // Dead tokens do not fail it (their kind is APNsAnswerRule's verdict, stored with each outcome).
        if report.counts.rejected > 0 { throw CLIError(code: 1, message: "") }
    }

    /// One progress line. The first figures are the whole broadcast's (devices with an outcome, from earlier
    /// runs, this process and the others working on it; its rate and time left); the parenthesis is this
    /// process's part of this run, so its counts never mix with the totals.
    static func progressLine(_ p: BroadcastProgress) -> String {
        let done = p.doneOverall
        let rate = p.elapsed > 0 ? Double(p.done + p.doneByOthers) / p.elapsed : 0
        let remaining = max(0, p.total - done)
        let eta = rate > 0 ? Int(Double(remaining) / rate) : 0
        var line = "\(done)/\(p.total) done, \(Int(rate))/s, ETA \(eta / 60):\(String(format: "%02d", eta % 60))"
        line += " (this process: \(p.done) sent, accepted \(p.accepted), not accepted \(p.failed), pruned \(p.pruned))"
        if !p.waitingFor.isEmpty { line += "; waiting for \(p.waitingFor.joined(separator: ", "))" }
        return line
    }

    static func showProgress(_ p: BroadcastProgress, tty: Bool) {
        let percent = p.total > 0 ? min(100, Double(p.doneOverall) * 100 / Double(p.total)) : 100
        let stats = progressLine(p)
        if tty {
            let width = 30
            let filled = Int(percent / 100 * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(String(format: "%5.1f", percent))% \(stats)   ".utf8))
        } else {
            printError("progress: \(stats)")
        }
    }

    func printSummary(_ r: BroadcastReport) {
        let rate = r.seconds > 0 ? Double(r.sentThisRun) / r.seconds : 0
        let rejected = r.counts.notAcceptedByReason.sorted { $0.key < $1.key }
        if json {
            var fields: [(String, JSONValue)] = [
                ("id", .string(r.record.id)), ("state", .string(r.record.state.rawValue)),
                ("total", .int(Int64(r.record.total))), ("sentThisRun", .int(Int64(r.sentThisRun))),
                ("done", .int(Int64(r.counts.done))), ("accepted", .int(Int64(r.counts.accepted))),
                ("deferred", .int(Int64(r.counts.deferred))), ("tokenDead", .int(Int64(r.counts.tokenDead))),
                ("rejected", .object(rejected.map { ($0.key, JSONValue.int(Int64($0.value))) })),
                ("pruned", .int(Int64(r.counts.pruned))), ("retried", .int(Int64(r.counts.retried))),
                ("possiblyDuplicated", .int(Int64(r.counts.possiblyDuplicated))),
                ("seconds", .double((r.seconds * 1000).rounded() / 1000)), ("rate", .double(rate.rounded())),
                ("breakerTripped", .array(r.breakerTripped.map { .string($0) })),
                ("workers", .object(r.workers.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) })),
            ]
            if let stop = r.stop { fields.append(("interruption", .string(stop.description))) }
            print(JSONValue.object(fields).encodedString)
            return
        }
        print("broadcast \(r.record.id) \(r.record.state.rawValue): \(r.sentThisRun) sent by this process in \(String(format: "%.1f", r.seconds)) s (\(Int(rate)) notifications/s)")
        print("  devices \(r.record.total), finished \(r.counts.done), accepted \(r.counts.accepted), not accepted \(r.counts.notAccepted), dead tokens \(r.counts.tokenDead), deferred \(r.counts.deferred)")
        if !rejected.isEmpty { print("  not accepted by reason: " + rejected.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) }
        print("  pruned \(r.counts.pruned), retried \(r.counts.retried), possibly duplicated \(r.counts.possiblyDuplicated)")
        if r.workers.count > 1 || (r.sentThisRun == 0 && !r.workers.isEmpty) {
            print("  workers: " + r.workers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let stop = r.stop { print("  interrupted: \(stop.description)") }
        for endpoint in r.breakerTripped { print("  PRUNING BREAKER TRIPPED for \(endpoint): BadDeviceToken tokens were kept") }
    }
}
