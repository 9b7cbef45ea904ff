import Foundation
import PushCore

/// The registry's read connections. WAL lets readers run beside each other and beside the writer, but one
/// connection can run one statement at a time: with a single reader behind a lock, the store executor's threads
/// read one after another. The pool lends a connection per read, opening them as concurrent reads need them (a
/// one-shot command opens one), up to ``size``; a read that finds all of them lent waits for one (callers are
/// blocking store threads, never cooperative ones).
final class ReaderPool: @unchecked Sendable {
    /// At most this many connections.
    let size: Int
    private let open: () throws(StoreError) -> Connection
    // Guarded by `condition` (idle readers sleep on it, which `Mutex` cannot do).
    private let condition = NSCondition()
    private var idle: [Connection]
    private var opened: Int

    /// A pool that starts with `first` and opens more with `open`, up to `size`.
    init(first: Connection, size: Int, open: @escaping () throws(StoreError) -> Connection) {
        self.size = max(1, size)
        self.open = open
        idle = [first]
        opened = 1
    }

    /// Runs `body` on a connection no other thread uses meanwhile.
    func withConnection<T>(_ body: (Connection) throws(StoreError) -> T) throws(StoreError) -> T {
        let connection = try take()
        defer { give(back: connection) }
        return try body(connection)
    }

    /// Runs `body` on each connection that is not lent (all of them once the registry is going away).
    func forEachIdle(_ body: (Connection) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        for connection in idle { body(connection) }
    }

    private func take() throws(StoreError) -> Connection {
        condition.lock()
        while true {
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if opened < size { break }
            condition.wait()
        }
        opened += 1
        condition.unlock()
        do {
            return try open()
        } catch {
            condition.lock()
            opened -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func give(back connection: Connection) {
        condition.lock()
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }
}
