/// A bad field of a request — an installation field, a local-time request, a user proof: which field, and one
/// sentence naming it (the message the API's 400 and the CLI's one-line error carry).
public struct FieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field (`timeZone`, `tags`, `localTime`, …).
    public var field: String
    /// One sentence naming the field.
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { message }
}
