/// An HMS Core app's push token, as `HmsInstanceId.getToken(appId, "HCM")` gives it: an opaque string (today ~130
/// characters, `IQAAAACy0…`), kept and sent verbatim. Huawei documents no inner structure, so only what any token
/// has is checked — 32…1024 bytes of `A–Z a–z 0–9 - _ . : + / =` (base64 and base64url, with the separators tokens
/// have been seen with) — never its parts. Huawei's most common refused token is one with a stray space or a
/// character cut off ("80300007 Token invalid": developer.huawei.com's FAQ on server result codes): the first is
/// refused here, at registration; the second only Huawei can tell. The simulator applies the same bounds on its
/// own, as an independent referee.
public struct HMSPushToken: Sendable, Hashable, CustomStringConvertible {
    /// The shortest token accepted.
    public static let minimumLength = 32
    /// The longest token accepted.
    public static let maximumLength = 1024

    /// The token exactly as the app gave it.
    public let value: String

    public var description: String { value }

    /// Checks `text`; the error names `field` (`token`, `oldToken`).
    public init(parsing text: String, field: String = "token") throws(FieldError) {
        value = try Self.form.check(text, field: field)
    }

    /// Its form (``OpaqueTokenForm``).
    static let form = OpaqueTokenForm(
        name: "an HMS push token", lengths: minimumLength...maximumLength, alphabetText: "A-Z a-z 0-9 - _ . : + / =",
        isAlphabet: isAlphabet)

    /// The token alphabet: base64's and base64url's, `.` and `:`.
    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "/"),
            UInt8(ascii: "="):
            true
        default: false
        }
    }
}
