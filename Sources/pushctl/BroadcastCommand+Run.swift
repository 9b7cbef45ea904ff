import Foundation
import PushCore
import PushSender
import PushStore

extension BroadcastCommand {
    func execute(id: String, config: PushConfiguration, settings: AppSettings, registry: Registry) async throws {
        var broadcastConfig = BroadcastConfiguration()
        broadcastConfig.rate = rate
        broadcastConfig.leaseTtlMs = Int64(leaseSeconds * 1000)
        broadcastConfig.heartbeatMs = max(200, broadcastConfig.leaseTtlMs / 6)
        let broadcaster = Broadcaster(registry: registry, bundleId: settings.topic, configuration: broadcastConfig)
        let stop = StopFlag()
        let signals = SignalWatcher { stop.raise($0) }
        defer { signals.cancel() }
        let tty = isatty(STDERR_FILENO) == 1
        let report: BroadcastReport
        do {
            report = try await broadcaster.run(
                id: id, stop: stop, progressInterval: tty ? 0.25 : 5,
                progress: { Self.showProgress($0, tty: tty) },
                makeSender: { sink in try SenderFactory.make(config: config, settings: settings, sink: sink) })
        } catch let error as BroadcastError {
            if case .running = error.code { throw CLIError(code: 4, message: error.message) }
            throw CLIError(code: 1, message: error.message)
        }
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        printSummary(report)
        if report.signal != 0 {
            throw CLIError(code: report.signal == SIGTERM ? 143 : 130,
                           message: "broadcast \(id) interrupted; run the same command again to resume")
        }
        if report.record.state == .failed { throw CLIError(code: 3, message: report.record.error ?? "broadcast failed") }
        let failedKinds = report.counts.notAcceptedByReason.keys.filter { !["Unregistered", "ExpiredToken", "BadDeviceToken", "DeviceTokenNotForTopic"].contains($0) }
        if !report.sender.breakerTripped.isEmpty {
            throw CLIError(code: 1, message: "pruning breaker tripped for \(report.sender.breakerTripped.joined(separator: ", ")): BadDeviceToken storm, tokens kept (sandbox/production mix-up?)")
        }
        if !failedKinds.isEmpty { throw CLIError(code: 1, message: "") }
    }

    static func showProgress(_ p: BroadcastProgress, tty: Bool) {
        let done = p.doneBefore + p.done
        let rate = p.elapsed > 0 ? Double(p.done) / p.elapsed : 0
        let remaining = max(0, p.total - done)
        let eta = rate > 0 ? Int(Double(remaining) / rate) : 0
        let percent = p.total > 0 ? min(100, Double(done) * 100 / Double(p.total)) : 100
        let stats = "\(done)/\(p.total) \(Int(rate))/s ETA \(eta / 60):\(String(format: "%02d", eta % 60)) accepted \(p.accepted) failed \(p.failed) pruned \(p.pruned)"
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
            let value: JSONValue = .object([
                ("id", .string(r.record.id)), ("state", .string(r.record.state.rawValue)),
                ("total", .int(Int64(r.record.total))), ("sentThisRun", .int(Int64(r.sentThisRun))),
                ("done", .int(Int64(r.counts.done))), ("accepted", .int(Int64(r.counts.accepted))),
                ("rejected", .object(rejected.map { ($0.key, JSONValue.int(Int64($0.value))) })),
                ("pruned", .int(Int64(r.counts.pruned))), ("retried", .int(Int64(r.counts.retried))),
                ("possiblyDuplicated", .int(Int64(r.counts.possiblyDuplicated))),
                ("seconds", .double((r.seconds * 1000).rounded() / 1000)), ("rate", .double(rate.rounded())),
                ("breakerTripped", .array(r.sender.breakerTripped.map { .string($0) })),
            ])
            print(value.encodedString)
            return
        }
        print("broadcast \(r.record.id) \(r.record.state.rawValue): \(r.sentThisRun) sent in \(String(format: "%.1f", r.seconds)) s (\(Int(rate)) notifications/s)")
        print("  devices \(r.record.total), finished \(r.counts.done), accepted \(r.counts.accepted), not accepted \(r.counts.notAccepted)")
        if !rejected.isEmpty { print("  not accepted by reason: " + rejected.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) }
        print("  pruned \(r.counts.pruned), retried \(r.counts.retried), possibly duplicated \(r.counts.possiblyDuplicated)")
        for endpoint in r.sender.breakerTripped { print("  PRUNING BREAKER TRIPPED for \(endpoint): BadDeviceToken tokens were kept") }
    }
}

/// Turns SIGINT/SIGTERM into a callback (the broadcast then drains and checkpoints).
final class SignalWatcher: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}

/// Builds a sender for an app, mapping failures to exit codes: unreadable credentials are a configuration
/// error (2), an expired certificate means nothing can be delivered (3).
enum SenderFactory {
    static func make(config: PushConfiguration, settings: AppSettings, sink: DeliverySink?) throws -> Sender {
        do {
            return try Sender.forApp(settings, in: config, sink: sink)
        } catch let error as CredentialError {
            throw CLIError.usage("credentials: \(error)")
        } catch let error as SenderError {
            throw CLIError(code: 3, message: error.message)
        }
    }
}
