import Hummingbird

/// The `limit` query parameter of the list routes: one rule and one message for all of them (the delivery history's
/// `DeliveryQuery` says it the same way), so a client learns the bound from the 400 whichever list it reads.
enum QueryLimit {
    /// `limit` from `request`'s query, or `defaultValue` without one; a 400 `invalid_limit` unless it is a whole
    /// number from 1 to `maximum`.
    static func parse(_ request: Request, default defaultValue: Int, maximum: Int) throws(APIError) -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return defaultValue }
        guard let n = Int(text), (1...maximum).contains(n) else {
            throw APIError.badRequest("limit", "limit must be a whole number from 1 to \(maximum), not '\(text.prefix(20))'")
        }
        return n
    }
}
