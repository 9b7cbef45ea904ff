import Foundation

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
}
