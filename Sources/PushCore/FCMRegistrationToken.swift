/// An Android app's FCM registration token, as `FirebaseMessaging.getInstance().token` gives it: an opaque string
/// (today ~150–200 characters, `<id>:APA91b…`), kept and sent verbatim. Google documents no inner structure, so
/// only what any token has is checked — 32…4096 bytes of FCM's alphabet `A–Z a–z 0–9 - _ :` — never its parts
/// (a future format must not be refused). The simulator's FCM service (`FCMMessageService.isWellFormed`) applies
/// the same bounds on its own, as an independent referee.
public struct FCMRegistrationToken: Sendable, Hashable, CustomStringConvertible {
    /// The shortest token accepted.
    public static let minimumLength = 32
    /// The longest token accepted.
    public static let maximumLength = 4096

    /// The token exactly as the app gave it.
    public let value: String

    public var description: String { value }

    /// Checks `text`; the error names `field` (`token`, `oldToken`).
    public init(parsing text: String, field: String = "token") throws(FieldError) {
        value = try Self.form.check(text, field: field)
    }

    /// Its form (``OpaqueTokenForm``).
    static let form = OpaqueTokenForm(
        name: "an FCM registration token", lengths: minimumLength...maximumLength, alphabetText: "A-Z a-z 0-9 - _ :",
        isAlphabet: isAlphabet)

    /// FCM's token alphabet: base64url's and `:`.
    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
