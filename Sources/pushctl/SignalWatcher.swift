import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT/SIGTERM into a callback (a broadcast then drains and checkpoints). For the long-running services
/// (`serve`, `worker`) it also bounds the drain: once a signal came, the process exits at the latest ``stopDeadlineSeconds`` later (exit status 1, one line on
/// stderr), and at once on a second signal — whatever it still waits for (a database or APNs host that vanished
/// mid-statement, a commit retried through an outage). Nothing is lost by that: work not committed was never
/// acknowledged, and shards still claimed are taken over by other workers when their leases expire.
final class SignalWatcher: @unchecked Sendable {
    /// How long a stopping process may drain after SIGINT/SIGTERM. A healthy drain (commit the in-flight window,
    /// give shards back, finish requests) takes well under a second; 30 s leaves a database or APNs connection time
    /// to fail by itself (TCP keepalives notice a dead PostgreSQL host in about 25 s) and stays inside systemd's
    /// default stop timeout (90 s), so the service manager never needs SIGKILL.
    static let stopDeadlineSeconds = 30

    private var sources: [any DispatchSourceSignal] = []

    /// Calls `handler` for each SIGINT/SIGTERM. With `deadlineSeconds`, bounds the stop as described above; `what`
    /// names the process in the deadline's message.
    init(_ what: String = "pushctl", deadlineSeconds: Int? = nil, _ handler: @escaping @Sendable (Int32) -> Void) {
        let signals = SignalCount()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                handler(number)
                if let deadlineSeconds {
                    Self.bound(what: what, signal: number, count: signals.next(), deadlineSeconds: deadlineSeconds)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The first signal arms the deadline; a second one exits now.
    private static func bound(what: String, signal: Int32, count: Int, deadlineSeconds: Int) {
        if count > 1 {
            exitNow("\(what): second signal \(signal) while stopping; exiting without finishing the drain")
        }
        guard count == 1 else { return }
        // A timer on a dispatch thread, not a task: it fires even when every cooperative thread is blocked.
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(deadlineSeconds)) {
            exitNow("\(what): still stopping \(deadlineSeconds) s after signal \(signal) (the stop deadline); exiting without "
                + "finishing the drain: uncommitted work was never acknowledged and claimed shards are taken over when their leases expire")
        }
    }

    private static func exitNow(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        _exit(1)
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}

/// Signals received so far.
private final class SignalCount: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more and returns the count.
    func next() -> Int { count.wrappingAdd(1, ordering: .relaxed).newValue }
}
