import Foundation
import PushCore

/// The outbound HTTP proxy the sender's connections go through, with its credentials read. HTTPS to APNs is
/// tunnelled with `CONNECT` (TLS and its verification stay end to end); the password never appears in
/// ``description``, logs or errors.
public struct SenderProxy: Sendable, Equatable, CustomStringConvertible {
    /// `http://host:port` (no credentials).
    public var url: String
    /// The proxy user name, or nil when the proxy needs no credentials.
    public var username: String?
    /// The proxy password (with ``username``).
    public var password: String?

    /// Creates a proxy.
    public init(url: String, username: String? = nil, password: String? = nil) {
        self.url = url
        self.username = username
        self.password = password
    }

    /// Reads the credentials `settings` names: the first line of `proxyCredentialsFile` (a secret file,
    /// ``SecretFileLoader``) or the value of `proxyCredentialsEnv`, `user:password` (split at the first colon). Errors
    /// name the file or variable, never the secret.
    public init(_ settings: ProxySettings, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(CredentialError)
    {
        url = settings.url
        guard let source = settings.credentials else { return }
        let text: String
        let what: String
        switch source {
        case .file(let path):
            what = "proxy credentials file \(path)"
            text = try CredentialFiles.firstLine(path, name: "proxy credentials file")
        case .environment(let name):
            what = "environment variable \(name) (the proxy credentials)"
            guard let value = environment[name] else { throw CredentialError(.missingPassword, "\(what) is not set") }
            text = value
        }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw CredentialError(.invalidInput, "\(what) must hold user:password")
        }
        username = String(text[..<colon])
        password = String(text[text.index(after: colon)...])
    }

    /// The URL, and the user name when there is one; never the password.
    public var description: String { username.map { "\(url) (user \($0))" } ?? url }
}
