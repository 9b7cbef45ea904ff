import Dispatch
import PostgresNIO
import Synchronization

/// Wakes threads waiting for work when PostgreSQL delivers a `NOTIFY` on a channel. A dedicated connection
/// `LISTEN`s, opened on the first wait and again after it is lost; while there is none, waits simply time
/// out, so callers that wait in a loop fall back to polling.
final class PostgresWakeups: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let pool: PostgresPool
    private let channel: String
    private let state = Mutex(State())

    init(pool: PostgresPool, channel: String) {
        self.pool = pool
        self.channel = channel
    }

    deinit {
        // Not waited for: the last reference may go away on any thread (see ``PostgresPool``).
        // The connection is kept until its close completed (postgres-nio asserts it is closed when it goes away).
        if let connection = state.withLock({ $0.connection }) {
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }
    }

    /// Waits until a notification arrives or `timeoutMs` pass, without blocking a thread; (re)opening the
    /// listening connection, which blocks, runs on `executor`.
    func wait(timeoutMs: Int, executor: StoreExecutor) async {
        _ = await executor.perform { self.listen() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { s in
                s.nextWaiter += 1
                s.waiters[s.nextWaiter] = continuation
                return s.nextWaiter
            }
            Task {
                try? await Task.sleep(for: .milliseconds(max(1, timeoutMs)))
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    private func listen() {
        guard state.withLock({ $0.connection == nil }) else { return }
        guard let connection = try? pool.openConnection() else { return }
        connection.addListener(channel: channel) { [weak self] _, _ in self?.wakeAll() }
        let session = PostgresSession(connection: connection, timeout: pool.queryTimeout, logger: pool.logger)
        guard (try? session.query("LISTEN \(unescaped: channel)")) != nil else {
            _ = try? connection.close().wait()
            return
        }
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.state.withLock { $0.connection = nil }
        }
        state.withLock { $0.connection = connection }
    }

    private func wakeAll() {
        let waiters = state.withLock { s in
            let all = s.waiters.values
            s.waiters.removeAll()
            return all
        }
        for waiter in waiters { waiter.resume() }
    }
}
