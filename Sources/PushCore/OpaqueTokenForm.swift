/// The one rule for an opaque device token a service hands an app (FCM's registration token, Push Kit's push token):
/// only what any such token has is checked — its length in bytes and its alphabet — never its parts, so a future
/// format is not refused. Each token type names its bounds and alphabet; the errors name the field and the service.
struct OpaqueTokenForm: Sendable {
    /// What the token is called in errors ("an FCM registration token").
    var name: String
    /// The accepted lengths, in bytes.
    var lengths: ClosedRange<Int>
    /// The alphabet as errors spell it ("A-Z a-z 0-9 - _ :").
    var alphabetText: String
    /// The alphabet.
    var isAlphabet: @Sendable (UInt8) -> Bool

    /// `text` when it has this form; otherwise an error naming `field`.
    func check(_ text: String, field: String) throws(FieldError) -> String {
        let count = text.utf8.count
        guard lengths.contains(count) else {
            throw FieldError(
                field: field, message: "\(field) must be \(name) of \(lengths.lowerBound)…\(lengths.upperBound) characters, not \(count)")
        }
        guard text.utf8.allSatisfy(isAlphabet) else {
            throw FieldError(field: field, message: "\(field) must be \(name): only \(alphabetText) are allowed")
        }
        return text
    }
}
