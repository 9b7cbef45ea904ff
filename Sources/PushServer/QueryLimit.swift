import Hummingbird
import PushCore

/// The `limit` query parameter of the list routes, by the one rule of every list (``ListLimit``).
enum QueryLimit {
    /// `limit` from `request`'s query, or `defaultValue` without one; a 400 `invalid_limit` unless it is a whole
    /// number from 1 to `maximum`.
    static func parse(_ request: Request, default defaultValue: Int, maximum: Int) throws(APIError) -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return defaultValue }
        do { return try ListLimit.parse(text, maximum: maximum) } catch { throw APIError.badRequest("limit", "limit \(error.message)") }
    }
}
