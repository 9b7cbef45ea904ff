/// A storage failure as the delivery engine sees it: whether to wait and retry, or stop.
public struct DeliveryStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; the set is open.
    public enum Code: Sendable, Equatable {
        /// The store is busy or unreachable (locked database, I/O error, lost connection): retry with backoff.
        case unavailable
        /// The run's lease fence is no longer current: another owner took the broadcast over. Stop, write nothing.
        case leaseLost
        /// The broadcast does not exist.
        case notFound
        /// Anything else (corrupt data, constraint): stop.
        case unknown
    }

    /// The kind.
    public let code: Code
    /// One line saying what failed.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
