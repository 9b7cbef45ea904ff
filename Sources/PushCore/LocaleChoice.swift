/// Which locale's text a device gets: its full tag (`pt-BR`), then its language (`pt`), then the default. Tags
/// compare case-insensitively (both sides are canonical BCP 47 when they come through ``InstallationRules``).
public enum LocaleChoice {
    /// The key of `keys` that `locale` picks, or nil for the default text.
    public static func pick(_ locale: String?, among keys: some Collection<String>) -> String? {
        guard let locale, !locale.isEmpty else { return nil }
        let wanted = locale.lowercased()
        if let exact = keys.first(where: { $0.lowercased() == wanted }) { return exact }
        let language = wanted.split(separator: "-").first.map(String.init) ?? wanted
        return keys.first { $0.lowercased() == language }
    }

    /// The text for `locale` from a per-locale map whose `default` entry is the fallback.
    public static func text(for locale: String?, in texts: [String: String]) -> String? {
        let keys = texts.keys.filter { $0 != "default" }
        if let key = pick(locale, among: keys) { return texts[key] }
        return texts["default"]
    }
}
