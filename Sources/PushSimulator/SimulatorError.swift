/// Errors in a devices file or in simulator configuration.
public struct SimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable code.
    public enum Code: String, Sendable, Equatable {
        /// The devices file is not valid.
        case badDevicesFile
        /// TLS material (CA, certificate, key) could not be loaded.
        case badTLSMaterial
        /// A provider-token key could not be loaded.
        case badJWTKey
        /// The configuration is inconsistent (e.g. certificate mode without a CA).
        case badConfiguration
        /// The listening socket could not be bound.
        case bindFailed
    }

    /// The failure class.
    public let code: Code
    /// A one-line explanation.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
