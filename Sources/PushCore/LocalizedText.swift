/// Per-locale alert text: `title`, `subtitle` and `alert` may each be texts by locale with a `default`
/// (`{"default": "Good morning", "de": "Guten Morgen"}`). One rule for every entry point — the API's per-locale
/// objects and `pushctl`'s `--alert-for LOCALE=TEXT` — so both refuse and fall back alike (``LocaleChoice``).
public struct LocalizedText: Sendable, Equatable {
    /// The alert fields that may be given per locale.
    public static let fields = ["title", "subtitle", "alert"]
    /// Entries one field may have, its `default` included.
    public static let maximumEntries = 20

    /// Texts by field, then by canonical locale or `default`.
    public private(set) var texts: [String: [String: String]] = [:]

    public init() {}

    /// True when no field is given per locale.
    public var isEmpty: Bool { texts.isEmpty }

    /// The locales named by any field, sorted (without `default`).
    public var locales: [String] { Set(texts.values.flatMap(\.keys)).subtracting(["default"]).sorted() }

    /// Sets `field`'s texts from `entries` (key: a canonical BCP 47 locale or `default`). Throws, naming the field,
    /// for more than ``maximumEntries``, a key not in canonical BCP 47 form, a locale named twice, or no `default`.
    public mutating func set(_ field: String, _ entries: [(key: String, text: String)]) throws(FieldError) {
        guard entries.count <= Self.maximumEntries else {
            throw FieldError(field: field, message: "\(field): per-locale text takes at most \(Self.maximumEntries) entries (the default included)")
        }
        var map: [String: String] = [:]
        for (key, text) in entries {
            if key != "default" {
                // Keys in canonical form (what devices' locales are stored as), so each locale is named once.
                guard let tag = try? InstallationRules.locale(key), tag == key else {
                    throw FieldError(field: field, message: "\(field): '\(key)' is not a BCP 47 locale in canonical form (such as en, de-DE, zh-Hant-TW)")
                }
            }
            guard map.updateValue(text, forKey: key) == nil else {
                throw FieldError(field: field, message: "\(field): '\(key)' is given twice")
            }
        }
        guard map["default"] != nil else {
            throw FieldError(field: field, message: "\(field): per-locale text needs a 'default' for devices of other locales")
        }
        texts[field] = map
    }

    /// `field`'s text for a device of `locale` (nil: the default): its locale's, else its language's, else the
    /// default. Nil when `field` is not given per locale.
    public func text(_ field: String, for locale: String?) -> String? {
        guard let map = texts[field] else { return nil }
        return locale.flatMap { LocaleChoice.text(for: $0, in: map) } ?? map["default"]
    }

    /// The default payload and one payload per named locale, each made by `build` with the texts that locale gets
    /// (``text(_:for:)``, nil locale for the default), so every variant is built and size-checked before anything
    /// is stored. `named` turns a variant's error into one naming its locale.
    public func prepare<Failure: Error>(
        _ build: (_ locale: String?) throws(Failure) -> PreparedNotification, named: (String, Failure) -> Failure
    ) throws(Failure) -> (PreparedNotification, variants: [String: [UInt8]]) {
        let prepared = try build(nil)
        var variants: [String: [UInt8]] = [:]
        for locale in locales {
            do throws(Failure) { variants[locale] = try build(locale).payload } catch { throw named(locale, error) }
        }
        return (prepared, variants)
    }
}
