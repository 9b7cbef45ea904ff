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
    /// At most this many notifications per second.
    var rate: Double?
    /// The summary as JSON.
    var json: Bool

    func run(id: String, config: PushConfiguration, settings: AppSettings, registry: any RegistryStore) async throws {
        var engine = BroadcastConfiguration(config)
        engine.rate = rate
        let store = registry.deliveryStore
        let broadcaster = Broadcaster(store: store, bundleId: settings.topic, configuration: engine)
        let breakers = (try? registry.breakerStates(app: app)) ?? [:]
        let sender: Sender
        do {
            sender = try SenderFactory.make(config: config, settings: settings, breakers: breakers)
        } catch let error as CLIError {
            try? store.noteUnstartable(id: id, error: error.message)
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
        let dead: Set<String> = ["Unregistered", "ExpiredToken", "BadDeviceToken", "DeviceTokenNotForTopic"]
        if report.counts.notAcceptedByReason.keys.contains(where: { !dead.contains($0) }) { throw CLIError(code: 1, message: "") }
    }

    static func showProgress(_ p: BroadcastProgress, tty: Bool) {
        let done = p.doneBefore + p.done
        let rate = p.elapsed > 0 ? Double(p.done) / p.elapsed : 0
        let remaining = max(0, p.total - done)
        let eta = rate > 0 ? Int(Double(remaining) / rate) : 0
        let percent = p.total > 0 ? min(100, Double(done) * 100 / Double(p.total)) : 100
        let stats = "\(done)/\(p.total) \(Int(rate))/s ETA \(eta / 60):\(String(format: "%02d", eta % 60)) accepted \(p.accepted) not accepted \(p.failed) pruned \(p.pruned)"
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
                ("deferred", .int(Int64(r.counts.deferred))),
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
        print("broadcast \(r.record.id) \(r.record.state.rawValue): \(r.sentThisRun) sent in \(String(format: "%.1f", r.seconds)) s (\(Int(rate)) notifications/s)")
        print("  devices \(r.record.total), finished \(r.counts.done), accepted \(r.counts.accepted), not accepted \(r.counts.notAccepted), deferred \(r.counts.deferred)")
        if !rejected.isEmpty { print("  not accepted by reason: " + rejected.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) }
        print("  pruned \(r.counts.pruned), retried \(r.counts.retried), possibly duplicated \(r.counts.possiblyDuplicated)")
        if r.workers.count > 1 {
            print("  workers: " + r.workers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let stop = r.stop { print("  interrupted: \(stop.description)") }
        for endpoint in r.breakerTripped { print("  PRUNING BREAKER TRIPPED for \(endpoint): BadDeviceToken tokens were kept") }
    }
}
