import Foundation
import PushCore

/// A value only touched while holding a lock. Lets ``SQLiteRegistry`` be `Sendable` while its SQLite
/// connections (which must never be used by two threads at once) are not.
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private let value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<T>(_ body: (Value) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(value)
    }

    /// Runs `body` with exclusive access to the value, waiting at most `timeoutMs` for it (then `.busy`): a caller
    /// queued behind others that each wait out SQLite's busy timeout gives up after one timeout, not after all of
    /// theirs.
    func withLock<T>(waitingAtMostMs timeoutMs: Int32, _ body: (Value) throws(StoreError) -> T) throws(StoreError) -> T {
        guard lock.lock(before: Date(timeIntervalSinceNow: Double(max(0, timeoutMs)) / 1000)) else {
            throw StoreError(.busy, "the registry's writer stayed busy for \(timeoutMs) ms")
        }
        defer { lock.unlock() }
        return try body(value)
    }
}
