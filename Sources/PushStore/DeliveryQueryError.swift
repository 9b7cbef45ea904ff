/// A delivery-history parameter that is not valid (the API answers 400 `invalid_<parameter>`, the CLI exits 2).
public struct DeliveryQueryError: Error, Sendable, Equatable {
    /// The parameter: `token`, `broadcast`, `since`, `status`, `limit` or `cursor`.
    public let parameter: String
    /// One line naming the parameter and what it must be.
    public let message: String

    /// Creates an error.
    public init(parameter: String, message: String) {
        self.parameter = parameter
        self.message = message
    }
}
