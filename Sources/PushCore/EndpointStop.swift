/// Why an endpoint stopped taking notifications. Devices it did not answer are not final: the run that
/// meets this stops as interrupted and the same broadcast id resumes them.
public struct EndpointStop: Sendable, Equatable, CustomStringConvertible {
    /// The cause.
    public enum Kind: String, Sendable, Equatable {
        /// The push service or TLS refused our credentials (BadCertificate, BadCertificateEnvironment, InvalidProviderToken,
        /// ExpiredProviderToken right after a refresh, a TLS alert from the server), or we refused the server's
        /// certificate. Fixing the credentials or the endpoint is needed.
        case credentials
        /// The push service stayed unreachable longer than the outage limit.
        case outage
        /// The run is stopping (a signal, a lost lease, the database): waiting notifications were not sent.
        case stopping
    }

    /// The cause.
    public var kind: Kind
    /// The endpoint, `https://host:port`.
    public var endpoint: String
    /// One line naming the real cause.
    public var message: String

    /// Creates a stop.
    public init(_ kind: Kind, endpoint: String, message: String) {
        self.kind = kind
        self.endpoint = endpoint
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
