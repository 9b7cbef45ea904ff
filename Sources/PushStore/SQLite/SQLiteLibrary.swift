/// The SQLite library this process runs with.
public enum SQLiteLibrary {
    /// The loaded library's version (`sqlite3_libversion()`), e.g. `3.40.1`: the system's, which may be newer
    /// than the headers the binary was built with (`pushctl --version` reports it).
    public static var version: String { Connection.libraryVersion }
}
