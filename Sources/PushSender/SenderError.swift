/// Why a sender could not be created or an endpoint was stopped.
public struct SenderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Equatable {
        /// The client certificate's notAfter has passed; nothing was sent.
        case certificateExpired
        /// The transport could not be set up (curl initialisation).
        case transport
        /// The app's configuration lacks what this sender needs (an APNs sender for an app without `apns`).
        case configuration
        /// Anything else.
        case unknown(String)
    }

    /// The kind of failure.
    public let code: Code
    /// One line for the operator.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
