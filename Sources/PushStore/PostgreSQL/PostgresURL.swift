import PushCore

/// A PostgreSQL database named by `postgres://user@host:port/database[?sslmode=disable|require]`. The
/// password never appears in it: it comes from a file or an environment variable (see ``PostgresRegistry/open(url:passwordFile:passwordEnv:)``).
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// The role to log in as.
    public var user: String
    /// The server's host name or address.
    public var host: String
    /// The server's port (default 5432).
    public var port: Int
    /// The database.
    public var database: String
    /// True with `sslmode=require`: TLS with full certificate and host name verification.
    public var requireTLS: Bool

    /// Parses `text`; a clear error names what is wrong.
    public init(parsing text: String) throws(StoreError) {
        func bad(_ why: String) -> StoreError { StoreError(.invalidInput, "database URL \(Self.redacted(text)): \(why)") }
        var rest: Substring
        if text.hasPrefix("postgres://") {
            rest = text.dropFirst("postgres://".count)
        } else if text.hasPrefix("postgresql://") {
            rest = text.dropFirst("postgresql://".count)
        } else {
            throw bad("must start with postgres://")
        }
        var query: Substring = ""
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw bad("names no database (postgres://user@host:port/database)") }
        let authority = rest[..<slash]
        let database = String(rest[rest.index(after: slash)...])
        guard !database.isEmpty, !database.contains("/") else { throw bad("names no database (postgres://user@host:port/database)") }
        guard let at = authority.lastIndex(of: "@") else { throw bad("names no user (postgres://user@host:port/database)") }
        let user = String(authority[..<at])
        guard !user.isEmpty else { throw bad("names no user") }
        guard !user.contains(":") else { throw bad("put no password in the URL; use databasePasswordFile or databasePasswordEnv") }
        var hostPort = authority[authority.index(after: at)...]
        var port = 5432
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            guard let p = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(p) else {
                throw bad("has an invalid port")
            }
            port = p
            hostPort = hostPort[..<colon]
        }
        if hostPort.hasPrefix("["), hostPort.hasSuffix("]") { hostPort = hostPort.dropFirst().dropLast() }
        guard !hostPort.isEmpty else { throw bad("names no host") }
        var requireTLS = false
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == "sslmode" else { throw bad("unknown parameter \(pair) (only sslmode is known)") }
            switch parts[1] {
            case "disable": requireTLS = false
            case "require", "verify-full": requireTLS = true
            default: throw bad("sslmode must be disable or require (require verifies the certificate and host name)")
            }
        }
        self.user = user
        self.host = String(hostPort)
        self.port = port
        self.database = database
        self.requireTLS = requireTLS
    }

    /// The URL as given (it holds no password).
    public var description: String {
        "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" + (requireTLS ? "?sslmode=require" : "")
    }

    /// `text` with anything between `://` and `@` past a colon hidden, for error messages.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else { return text }
        let userInfo = text[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
