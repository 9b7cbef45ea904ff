/// How many items a list returns: the `limit` of the HTTP API's list routes and of `pushctl deliveries`. One rule and
/// one message for every list, so a client learns the bound from the refusal whichever list it reads.
public enum ListLimit {
    /// `text` as a limit, a whole number from 1 to `maximum`; otherwise a ``FieldError`` whose message follows the
    /// parameter's name as the caller knows it ("must be a whole number from 1 to 500, not 'ten'").
    public static func parse(_ text: String, maximum: Int) throws(FieldError) -> Int {
        guard let n = Int(text), (1...maximum).contains(n) else {
            throw FieldError(field: "limit", message: "must be a whole number from 1 to \(maximum), not '\(text.prefix(20))'")
        }
        return n
    }
}
