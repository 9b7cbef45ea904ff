/// A HarmonyOS app's push token, as `pushService.getToken()` (`@kit.PushKit`) gives it: an opaque string that
/// identifies the app on one device, kept and sent verbatim. Huawei documents no inner structure (its examples are
/// `MAMzLg…`, `IQAAAA…`), so the same rule as HMS Core's tokens applies (``OpaqueTokenForm``): 32…1024 bytes of
/// `A–Z a–z 0–9 - _ . : + / =`, never its parts. A token is the app's on one device; a HarmonyOS token and an HMS
/// token are different devices' keys even when their text is alike (``PushService/harmonyos``).
public struct HarmonyOSPushToken: Sendable, Hashable, CustomStringConvertible {
    /// The shortest token accepted.
    public static let minimumLength = HMSPushToken.minimumLength
    /// The longest token accepted.
    public static let maximumLength = HMSPushToken.maximumLength

    /// The token exactly as the app gave it.
    public let value: String

    public var description: String { value }

    /// Checks `text`; the error names `field` (`token`, `oldToken`).
    public init(parsing text: String, field: String = "token") throws(FieldError) {
        value = try Self.form.check(text, field: field)
    }

    /// Its form: HMS Core's bounds and alphabet, under its own name.
    static let form = OpaqueTokenForm(
        name: "a HarmonyOS push token", lengths: minimumLength...maximumLength, alphabetText: HMSPushToken.form.alphabetText,
        isAlphabet: HMSPushToken.isAlphabet)
}
