import Foundation
import PushStore
import ServiceLifecycle
import Synchronization
import PushCore

/// Keeps a fresh picture of the database for `/healthz`, so a health check never waits on the database: a
/// background service asks it for its schema version every ``interval`` (on the store's executor) and
/// `/healthz` reads only the last answer. The database counts as unavailable when the last probe failed, when a
/// probe has been waiting longer than ``staleAfter`` (a locked file, a vanished host), or when any request saw it
/// unavailable within ``staleAfter`` (``noteUnavailable(_:)``).
final class HealthMonitor: Service, Sendable {
    /// What `/healthz` reports about the database.
    struct Snapshot: Sendable, Equatable {
        /// The schema version, once a probe answered.
        var schemaVersion: Int64?
        /// Why the database counts as unavailable now; nil when it answers.
        var problem: String?
        /// True when it answers.
        var ok: Bool { problem == nil }
    }

    private struct State {
        var schemaVersion: Int64?
        var lastError: String?
        /// When the probe in flight started (monotonic ns), nil when none is.
        var probeStartedNs: UInt64?
        /// The last failure a request reported, and when (monotonic ns).
        var lastUnavailable: (message: String, atNs: UInt64)?
    }

    let registry: any RegistryStore
    /// Time between probes.
    let interval: Duration
    /// A probe unanswered this long, or a request's failure this recent, makes the database unavailable.
    let staleAfter: Duration
    private let state = Mutex(State())

    init(registry: any RegistryStore, interval: Duration = .seconds(1), staleAfter: Duration = .seconds(2)) {
        self.registry = registry
        self.interval = interval
        self.staleAfter = staleAfter
    }

    private static func nowNs() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    private var staleNs: UInt64 {
        let (seconds, attoseconds) = staleAfter.components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// The picture now; never touches the database.
    var snapshot: Snapshot {
        let now = Self.nowNs()
        let stale = staleNs
        return state.withLock { s in
            var snapshot = Snapshot(schemaVersion: s.schemaVersion)
            if let started = s.probeStartedNs, now &- started > stale {
                snapshot.problem = "the database did not answer within \(staleAfter.components.seconds) s"
            } else if let error = s.lastError {
                snapshot.problem = error
            } else if let seen = s.lastUnavailable, now &- seen.atNs <= stale {
                snapshot.problem = seen.message
            }
            return snapshot
        }
    }

    /// A request found the database unavailable: `/healthz` says degraded for ``staleAfter``.
    func noteUnavailable(_ error: StoreError) {
        let now = Self.nowNs()
        state.withLock { $0.lastUnavailable = (error.message, now) }
    }

    /// One probe: asks for the schema version and records the answer.
    func probe() async {
        let started = Self.nowNs()
        state.withLock { $0.probeStartedNs = started }
        let result: Result<Int64, StoreError>
        do throws(StoreError) {
            result = .success(try await registry.run { try $0.schemaVersion() })
        } catch {
            result = .failure(error)
        }
        state.withLock { s in
            s.probeStartedNs = nil
            switch result {
            case .success(let version):
                s.schemaVersion = version
                s.lastError = nil
            case .failure(let error):
                s.lastError = error.message
            }
        }
    }

    /// Probes every ``interval`` until graceful shutdown.
    func run() async throws {
        while !Task.isCancelled {
            await probe()
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                return
            }
        }
    }
}
