import Foundation
import Logging
import PushCore
import PushDelivery
import PushSender
import PushStore

/// A send made now to tokens or registered devices (`pushctl send`, `pushctl live-activity start|update|end`):
/// results printed as their outcomes are committed, failures mapped to the documented exit codes.
enum DeviceSend {
    /// What was sent: the printer's counts.
    struct Counts {
        var total: Int
        var accepted: Int
        var deferred: Int
    }

    /// Sends `makeRequest(token)` to `targets`; returns when every outcome is committed. Throws a ``CLIError``:
    /// 1 when not everything was accepted (or nothing matched), 3 credentials refused, 5 APNs or the database
    /// unavailable, 130/143 interrupted. `credentials`: the app's credentials already loading
    /// (``SenderFactory/loadCredentials(_:)``), else they are loaded here.
    @discardableResult
    static func run(
        config: PushConfiguration, app: String, settings: AppSettings, registry: any RegistryStore, targets: SendRun.Targets,
        json: Bool, credentials: Task<Result<any CredentialProvider, any Error>?, Never>? = nil,
        makeRequest: @escaping @Sendable (DeviceToken) -> NotificationRequest
    ) async throws -> Counts {
        // Never a sender with its breakers reset by an outage: an unreadable state fails the command (exit 5).
        let savedBreakers = try await registry.run { try $0.breakerStates(app: app) }
        let sender = try await SenderFactory.make(
            config: config, settings: settings, credentials: credentials ?? SenderFactory.loadCredentials(settings),
            breakers: savedBreakers)
        let engine = BroadcastConfiguration(config)
        let output = ResultPrinter(json: json)
        let stop = StopFlag()
        let signals = SignalWatcher { stop.raise(signal: $0) }
        defer { signals.cancel() }
        let reason = await SendRun(store: registry.deliveryStore, app: app, configuration: engine, logger: Logger(label: "pushctl.send"))
            .run(
                targets, sender: sender, stop: stop, makeRequest: makeRequest,
                onCommitted: { for r in $0 { output.print(r) } },
                onUnrecorded: { for r in $0 { output.print(r, note: "not recorded: the database is unavailable") } })
        let breakers = sender.breakerStates
        do throws(StoreError) {
            try await registry.run { try $0.saveBreakerStates(app: app, breakers) }
        } catch {
            printError("pushctl: the pruning breaker's state was not saved (\(error.message)); the next send starts from the last saved one")
        }
        await sender.shutdown()
        output.flush()
        let counts = output.counts
        for endpoint in sender.summary.breakerTripped {
            printError("pushctl: pruning breaker tripped for \(endpoint): too many BadDeviceToken answers (sandbox/production mix-up?); those tokens were kept")
        }
        switch reason {
        case .signal(let n)?:
            throw CLIError(code: n == SIGTERM ? 143 : 130, message: "interrupted: \(counts.unsent) notifications not sent")
        case .endpoint(let endpointStop)? where endpointStop.kind == .credentials:
            throw CLIError(code: 3, message: "\(endpointStop.message); \(counts.unsent) notifications not sent")
        case .endpoint(let endpointStop)?:
            throw CLIError(code: 5, message: "\(endpointStop.message); \(counts.unsent) notifications not sent")
        case .store(let message)?:
            throw CLIError(code: 5, message: "the database is unavailable: \(message)")
        case .leaseLost?, nil:
            break
        }
        if counts.total == 0 { throw CLIError(code: 1, message: "no devices matched") }
        if counts.accepted == counts.total && sender.summary.breakerTripped.isEmpty {
            return Counts(total: counts.total, accepted: counts.accepted, deferred: counts.deferred)
        }
        throw CLIError(
            code: 1,
            message: "\(counts.accepted) of \(counts.total) accepted (\(counts.dead) dead tokens, \(counts.rejected) rejected, \(counts.deferred) deferred)")
    }
}
