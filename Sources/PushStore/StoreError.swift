/// A registry failure: a code to branch on and a one-line message for people.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. SQLite's primary result codes map to named cases where callers act
    /// on them differently; anything else is kept as ``unknown(_:)`` with SQLite's numeric code.
    public enum Code: Sendable, Equatable {
        /// The database stayed locked longer than the busy timeout.
        case busy
        /// A constraint (unique, foreign key, check) was violated.
        case constraint
        /// The file is not a database or is damaged.
        case corrupt
        /// The file could not be opened or created.
        case cannotOpen
        /// Disk full or another I/O error.
        case ioError
        /// The database was written by a newer PushProvider (higher schema version).
        case schemaTooNew
        /// The caller passed an invalid value (bad token, channel, reason, …); nothing was written.
        case invalidInput
        /// A broadcast write named a lease fence that is no longer current: another owner took over.
        case leaseLost
        /// Any other SQLite result code.
        case unknown(Int32)
    }

    /// The kind of failure.
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
