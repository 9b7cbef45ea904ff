// The only file in PushStore that talks to SQLite's C API. Everything else uses Connection and Statement.
import CSQLite
import PushCore

/// Turns a SQLite result code into a thrown ``StoreError``; `OK`, `ROW` and `DONE` pass.
/// Every C call in this file goes through here, like swift-nio's `syscall()`.
@discardableResult
func check(_ rc: Int32, _ db: OpaquePointer?, _ context: @autoclosure () -> String) throws(StoreError) -> Int32 {
    if rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE { return rc }
    let detail = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
    let code: StoreError.Code
    switch rc & 0xff {
    case SQLITE_BUSY, SQLITE_LOCKED: code = .busy
    case SQLITE_CONSTRAINT: code = .constraint
    case SQLITE_CORRUPT, SQLITE_NOTADB: code = .corrupt
    case SQLITE_CANTOPEN: code = .cannotOpen
    case SQLITE_IOERR, SQLITE_FULL: code = .ioError
    default: code = .unknown(rc)
    }
    // The extended code says which kind of busy, I/O error or constraint (e.g. SQLITE_BUSY_SNAPSHOT 517).
    let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
    throw StoreError(code, "\(context()): \(detail)", backendCode: .sqlite(result: rc & 0xff, extended: extended))
}

/// One SQLite connection. Not thread-safe by itself: ``SQLiteRegistry`` only uses it under a lock.
final class Connection {
    /// The loaded library's version (`sqlite3_libversion()`): ``SQLiteLibrary/version``.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// The `sqlite3*` handle, closed in `deinit`.
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]

    /// Opens (creating if needed) the database file and applies the connection settings every
    /// PushStore connection uses: WAL, a busy timeout, foreign keys, and the given `synchronous` level.
    init(path: String, busyTimeoutMs: Int32, synchronous: String) throws(StoreError) {
        var db: OpaquePointer?
        // NOMUTEX: SQLite's own per-connection mutex is redundant, every connection is used under our lock.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard let db, rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(.cannotOpen, "cannot open database \(path): \(message)")
        }
        handle = db
        try check(sqlite3_busy_timeout(db, busyTimeoutMs), db, "busy_timeout")
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA foreign_keys = ON")
        try execute("PRAGMA synchronous = \(synchronous)")
    }

    deinit {
        statements.removeAll()  // finalizes every cached statement before the handle closes
        sqlite3_close_v2(handle)
    }

    /// When this is the last connection to close, leave the WAL (and its index) for the next one to open instead
    /// of checkpointing it into the database and deleting it (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`).
    func keepWALOnClose() throws(StoreError) {
        try check(pp_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1), handle, "NO_CKPT_ON_CLOSE")
    }

    /// Runs fixed SQL (schema, pragmas, transaction control). Never pass SQL built from values here.
    func execute(_ sql: String) throws(StoreError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), handle, "executing \(sql.prefix(60))")
    }

    /// A prepared statement for `sql`, compiled once per connection and reused (reset before reuse).
    func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil), handle,
                  "preparing \(sql.prefix(60))")
        guard let raw else { throw StoreError(.invalidInput, "empty SQL statement") }
        let statement = Statement(raw, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction. Writers use `BEGIN IMMEDIATE` so the write lock is taken (waiting up
    /// to the busy timeout) before any read: a deferred transaction that upgrades later can fail with
    /// SQLITE_BUSY immediately, which the busy handler cannot retry.
    func transaction<T>(write: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute(write ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Runs `body` inside a savepoint; on error only the savepoint's changes are rolled back.
    func savepoint<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("SAVEPOINT item")
        do {
            let result = try body()
            try execute("RELEASE item")
            return result
        } catch {
            sqlite3_exec(handle, "ROLLBACK TO item", nil, nil, nil)
            sqlite3_exec(handle, "RELEASE item", nil, nil, nil)
            throw error
        }
    }
}

/// A prepared statement, finalized in `deinit`. Parameters are 1-based, columns 0-based.
final class Statement {
    private let handle: OpaquePointer
    private unowned let connection: Connection

    fileprivate init(_ handle: OpaquePointer, connection: Connection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings so it can run again.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds a text parameter (copied).
    func bind(_ index: Int32, _ value: String?) throws(StoreError) {
        guard let value else { return try bindNull(index) }
        var text = value
        let rc = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                guard let base = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, nil) }
                return pp_sqlite_bind_text(handle, index, base, Int32(chars.count))
            }
        }
        try check(rc, connection.handle, "binding parameter \(index)")
    }

    /// Binds an integer parameter.
    func bind(_ index: Int32, _ value: Int64?) throws(StoreError) {
        guard let value else { return try bindNull(index) }
        try check(sqlite3_bind_int64(handle, index, value), connection.handle, "binding parameter \(index)")
    }

    /// Binds a floating-point parameter.
    func bind(_ index: Int32, _ value: Double?) throws(StoreError) {
        guard let value else { return try bindNull(index) }
        try check(sqlite3_bind_double(handle, index, value), connection.handle, "binding parameter \(index)")
    }

    /// Binds NULL.
    func bindNull(_ index: Int32) throws(StoreError) {
        try check(sqlite3_bind_null(handle, index), connection.handle, "binding parameter \(index)")
    }

    /// Advances to the next row: `true` if a row is available, `false` when done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        defer { sqlite3_reset(handle) }
        try check(rc, connection.handle, "running statement")
        return false
    }

    /// Runs a statement that returns no rows (or ignores them) and resets it.
    func run() throws(StoreError) {
        defer { reset() }
        while try step() {}
    }

    /// The integer in `column` of the current row.
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The integer in `column`, or nil for NULL.
    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    /// The number in `column` of the current row.
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The text in `column` ("" for NULL).
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The text in `column`, or nil for NULL.
    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : text(column)
    }
}
