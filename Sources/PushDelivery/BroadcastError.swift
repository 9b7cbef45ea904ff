/// Why a broadcast could not start.
public struct BroadcastError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// No broadcast has this id.
        case notFound
        /// The database failed (or stayed unavailable past its outage limit).
        case store
    }
    /// The code.
    public let code: Code
    /// One line.
    public let message: String
    /// The message.
    public var description: String { message }

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}
