/// A storage failure — the registry's and the delivery engine's (``DeliveryStore``) alike: a kind to branch on, the
/// backend's own code, and a one-line message for people.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, in the registry's terms. SQLite result codes and PostgreSQL SQLSTATEs map to named cases
    /// where callers act on them differently; anything else is ``unknown(_:)`` (SQLite's numeric code, or 0). The
    /// backend's exact code is kept in ``backendCode``; callers branch on ``kind``.
    public enum Code: Sendable, Equatable {
        /// The database stayed locked longer than the busy timeout (or PostgreSQL reported a serialization
        /// failure, a deadlock or a lock timeout).
        case busy
        /// A constraint (unique, foreign key, check) was violated.
        case constraint
        /// The file is not a database or is damaged.
        case corrupt
        /// The file could not be opened or created (PostgreSQL: authentication failed, no such database).
        case cannotOpen
        /// Disk full or another I/O error (PostgreSQL: the connection failed, was lost or did not answer).
        case ioError
        /// The database was written by a newer PushProvider (higher schema version).
        case schemaTooNew
        /// The caller passed an invalid value (bad token, channel, reason, …); nothing was written.
        case invalidInput
        /// A broadcast write named a lease fence that is no longer current: another owner took over.
        case leaseLost
        /// The store could not be asked at all, or stayed busy or unreachable past a caller's limit (no store thread
        /// free in time, the engine's database outage limit).
        case unavailable
        /// Any other SQLite result code.
        case unknown(Int32)
    }

    /// The backend-neutral kind of a failure: what a caller does about it, on either backend.
    public enum Kind: Sendable, Equatable {
        /// The database is busy or unreachable for now (locked, lost connection, timed out, I/O error): retry
        /// later. The HTTP API answers 503 with `Retry-After`.
        case unavailable
        /// A constraint was violated (e.g. the id exists).
        case constraint
        /// The stored data or the file is damaged.
        case corrupt
        /// The caller's input was refused; nothing was written.
        case invalidInput
        /// The write's lease fence is no longer current.
        case leaseLost
        /// The database is from a newer PushProvider.
        case schemaTooNew
        /// Anything else.
        case other
    }

    /// The backend's own code for a failure, kept so that logs and tests see exactly what the database said.
    public enum BackendCode: Sendable, Equatable, CustomStringConvertible {
        /// A SQLite primary result code and its extended code (`SQLITE_BUSY` 5, `SQLITE_BUSY_SNAPSHOT` 517, …).
        case sqlite(result: Int32, extended: Int32)
        /// A PostgreSQL SQLSTATE (`40001`, `57P01`, …).
        case postgres(sqlstate: String)

        /// `sqlite 5/517` or `SQLSTATE 57P01`.
        public var description: String {
            switch self {
            case .sqlite(let result, let extended): "sqlite \(result)/\(extended)"
            case .postgres(let state): "SQLSTATE \(state)"
            }
        }
    }

    /// What failed.
    public let code: Code
    /// One line saying what failed.
    public let message: String
    /// The database's own code, when the failure came from the database (nil for failures found before it was
    /// asked, or for a connection that failed below SQL: refused, reset, timed out).
    public var backendCode: BackendCode?

    /// Creates an error.
    public init(_ code: Code, _ message: String, backendCode: BackendCode? = nil) {
        self.code = code
        self.message = message
        self.backendCode = backendCode
    }

    /// What a caller does about it: busy, I/O and cannot-open failures are ``Kind/unavailable`` (the file or the
    /// server may come back), the rest name themselves.
    public var kind: Kind {
        switch code {
        case .busy, .ioError, .cannotOpen, .unavailable: .unavailable
        case .constraint: .constraint
        case .corrupt: .corrupt
        case .invalidInput: .invalidInput
        case .leaseLost: .leaseLost
        case .schemaTooNew: .schemaTooNew
        case .unknown: .other
        }
    }

    /// True when retrying later may succeed (``Kind/unavailable``).
    public var isUnavailable: Bool { kind == .unavailable }

    /// The message.
    public var description: String { message }
}
