/// Why a payload or its request options were rejected. Messages are one line and name the rule.
public struct PayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule that failed (open set: later versions may add codes).
    public enum Code: Sendable, Equatable {
        /// Raw JSON that does not parse.
        case invalidJSON
        /// Raw JSON without an `aps` object, or a custom key named `aps`.
        case badAps
        /// A field with a wrong value (badge < 0, relevance outside 0…1, …).
        case invalidField(String)
        /// Priority 10 on a background push, or another priority the push type forbids.
        case priorityNotAllowed
        /// An explicit push type that contradicts the payload.
        case pushTypeMismatch
        /// Nothing for the device to do: no alert, sound, badge or content-available.
        case emptyNotification
        /// `apns-collapse-id` longer than 64 bytes.
        case collapseIdTooLong
        /// `apns-collapse-id` with a byte outside printable ASCII (0x20–0x7E).
        case collapseIdNotPrintable
        /// `apns-id` that is not a UUID.
        case badApnsId
        /// The encoded payload exceeds the limit and could not be truncated.
        case tooLarge(size: Int, limit: Int)
        /// Anything else.
        case unknown(String)
    }

    /// The rule that failed.
    public let code: Code
    /// A one-line message.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
