import Foundation

/// What the registry knows about one installation of the app besides its token — the fields of a Parse
/// installation (`PFInstallation`) that audiences filter on and local-time sends and per-locale text use.
/// Every field is optional: apps send what they know.
public struct Installation: Sendable, Equatable {
    /// The app's own id for this install (e.g. `identifierForVendor`): the same id its push-to-start tokens carry,
    /// so a device and its Live Activity tokens are one installation.
    public var installation: String?
    /// The app's user on this device (only ever set with proof: see ``UserAuth``).
    public var user: String?
    /// An IANA time zone name (`Europe/Berlin`), checked against the tz database.
    public var timeZone: String?
    /// A BCP 47 language tag (`de-DE`), in canonical case.
    public var locale: String?
    /// The app's version (`2.3.1`); compared in version order (``VersionOrder``).
    public var appVersion: String?
    /// The OS version (`17.2`); compared in version order.
    public var osVersion: String?
    /// A flat object of strings, numbers and booleans (the app's own segments).
    public var tags: [String: TagValue]

    /// Creates one.
    public init(
        installation: String? = nil, user: String? = nil, timeZone: String? = nil, locale: String? = nil,
        appVersion: String? = nil, osVersion: String? = nil, tags: [String: TagValue] = [:]
    ) {
        self.installation = installation
        self.user = user
        self.timeZone = timeZone
        self.locale = locale
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.tags = tags
    }

    /// True when no field is set.
    public var isEmpty: Bool { self == Installation() }

    /// The tags as stored: a JSON object with keys sorted (nil when there are none).
    public var tagsJSON: String? {
        tags.isEmpty ? nil : JSONValue.object(tags.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) }).encodedString
    }

    /// Parses the stored tags column (a JSON object written by ``tagsJSON``); nil or damaged text gives no tags.
    public static func tags(fromJSON text: String?) -> [String: TagValue] {
        guard let text, let json = try? JSONValue(parsing: text), let pairs = json.objectPairs else { return [:] }
        var out: [String: TagValue] = [:]
        for (key, value) in pairs { if let tag = TagValue(value) { out[key] = tag } }
        return out
    }

    /// The fields as a JSON object (absent fields as null, tags as an object): what the API answers.
    public var jsonFields: [(String, JSONValue)] {
        func text(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        return [
            ("installation", text(installation)), ("user", text(user)), ("timeZone", text(timeZone)),
            ("locale", text(locale)), ("appVersion", text(appVersion)), ("osVersion", text(osVersion)),
            ("tags", .object(tags.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })),
        ]
    }
}

/// One tag value: a string, a number or a boolean.
public enum TagValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)

    /// From JSON; nil for null, arrays and objects.
    public init?(_ json: JSONValue) {
        switch json {
        case .string(let s): self = .string(s)
        case .int(let i): self = .number(Double(i))
        case .double(let d): self = .number(d)
        case .bool(let b): self = .bool(b)
        default: return nil
        }
    }

    /// As JSON: integral numbers as integers, so `3` stays `3`.
    public var json: JSONValue {
        switch self {
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .number(let d):
            if d.rounded() == d, abs(d) < 9.0e15 { return .int(Int64(d)) }
            return .double(d)
        }
    }
}

/// A registration's installation fields: each one kept (left out), cleared (`null`) or set.
public struct InstallationUpdate: Sendable, Equatable {
    public var installation: FieldUpdate<String> = .keep
    public var user: FieldUpdate<String> = .keep
    public var timeZone: FieldUpdate<String> = .keep
    public var locale: FieldUpdate<String> = .keep
    public var appVersion: FieldUpdate<String> = .keep
    public var osVersion: FieldUpdate<String> = .keep
    public var tags: FieldUpdate<[String: TagValue]> = .keep

    /// Nothing given: every field keeps its value.
    public init() {}

    /// The JSON keys a registration may carry for these fields (besides `userAuth`, the proof for `user`).
    public static let fieldNames: [String] = ["installation", "user", "timeZone", "locale", "appVersion", "osVersion", "tags"]

    /// True when no field was given.
    public var isEmpty: Bool { self == InstallationUpdate() }

    /// The installation after this update: given fields win, the rest keep the device's own value, else the value
    /// of the token it replaces (old→new replacement carries everything over).
    public func applied(to existing: Installation?, replaced: Installation?) -> Installation {
        Installation(
            installation: installation.resolved(existing: existing?.installation, replaced: replaced?.installation),
            user: user.resolved(existing: existing?.user, replaced: replaced?.user),
            timeZone: timeZone.resolved(existing: existing?.timeZone, replaced: replaced?.timeZone),
            locale: locale.resolved(existing: existing?.locale, replaced: replaced?.locale),
            appVersion: appVersion.resolved(existing: existing?.appVersion, replaced: replaced?.appVersion),
            osVersion: osVersion.resolved(existing: existing?.osVersion, replaced: replaced?.osVersion),
            tags: tags.resolved(
                existing: existing.flatMap { $0.tags.isEmpty ? nil : $0.tags },
                replaced: replaced.flatMap { $0.tags.isEmpty ? nil : $0.tags }) ?? [:])
    }

    /// Sets one field from its JSON value (`null` clears it), validating it: the one parser the API's JSON, the
    /// form body and `tokens import --format jsonl` share. Throws naming the field.
    public mutating func set(_ field: String, json value: JSONValue, zones: TimeZoneNames) throws(FieldError) {
        if field == "tags" {
            if value == .null { tags = .clear; return }
            tags = .set(try InstallationRules.tags(value))
            return
        }
        let text: String?
        switch value {
        case .null: text = nil
        case .string(let s): text = s
        default: throw FieldError(field: field, message: "'\(field)' must be a string or null")
        }
        try set(field, text: text, zones: zones)
    }

    /// Sets one text field (nil clears it), validating it; `tags` takes a JSON object in text.
    /// `zones` is the tz database a `timeZone` is checked against (and made canonical by).
    public mutating func set(_ field: String, text: String?, zones: TimeZoneNames) throws(FieldError) {
        guard let text else {
            switch field {
            case "installation": installation = .clear
            case "user": user = .clear
            case "timeZone": timeZone = .clear
            case "locale": locale = .clear
            case "appVersion": appVersion = .clear
            case "osVersion": osVersion = .clear
            case "tags": tags = .clear
            default: throw FieldError(field: "field", message: "unknown field '\(field)'")
            }
            return
        }
        switch field {
        case "installation": installation = .set(try InstallationRules.installation(text))
        case "user": user = .set(try UserAuth.validUser(text))
        case "timeZone": timeZone = .set(try InstallationRules.timeZone(text, zones: zones))
        case "locale": locale = .set(try InstallationRules.locale(text))
        case "appVersion": appVersion = .set(try InstallationRules.version(text, field: "appVersion"))
        case "osVersion": osVersion = .set(try InstallationRules.version(text, field: "osVersion"))
        case "tags":
            let json: JSONValue
            do { json = try JSONValue(parsing: text) } catch {
                throw FieldError(field: "tags", message: "tags must be a JSON object: \(error)")
            }
            tags = .set(try InstallationRules.tags(json))
        default: throw FieldError(field: "field", message: "unknown field '\(field)'")
        }
    }
}

/// The rules each installation field is checked against (one place for the API, the form body and the import).
public enum InstallationRules {
    /// The most tags one device may carry.
    public static let maximumTags = 32
    /// The longest tag key, in bytes.
    public static let maximumTagKeyLength = 64
    /// The longest tag string value, in characters (Unicode scalars, as JSON Schema's maxLength counts).
    public static let maximumTagValueLength = 256
    /// The longest version string, in bytes.
    public static let maximumVersionLength = 64
    /// The longest locale tag, in bytes.
    public static let maximumLocaleLength = 35

    /// An installation id: 1–128 printable ASCII characters without spaces (as push-to-start tokens take it).
    public static func installation(_ text: String) throws(FieldError) -> String {
        guard !text.isEmpty, text.utf8.count <= 128, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw FieldError(field: "installation", message: "installation must be 1-128 printable ASCII characters without spaces")
        }
        return text
    }

    /// An IANA zone name of the tz database `zones` (a zone or a link: `Europe/Berlin`, `Asia/Calcutta`, `Etc/UTC`,
    /// `UTC`), returned as its canonical zone (`Asia/Calcutta` → `Asia/Kolkata`) so one place has one name.
    /// Offsets (`GMT+2`, `UTC+1`) and abbreviations the database does not define (`PST`) are refused: they do not
    /// follow a place's daylight-saving rules.
    public static func timeZone(_ text: String, zones: TimeZoneNames) throws(FieldError) -> String {
        guard let canonical = zones.canonical(text) else {
            throw FieldError(
                field: "timeZone", message: "timeZone must be an IANA time zone name such as Europe/Berlin, not '\(text.prefix(64))'")
        }
        return canonical
    }

    /// A BCP 47 language tag, in canonical case (`de`, `de-DE`, `zh-Hant-TW`, `es-419`); `_` as iOS writes it
    /// (`de_DE`) is taken for `-`. Language 2–3 (or 5–8) letters, then up to three subtags of 1–8 letters or digits.
    public static func locale(_ text: String) throws(FieldError) -> String {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "_" }
        func bad() -> FieldError {
            FieldError(field: "locale", message: "locale must be a BCP 47 language tag such as de or de-DE, not '\(text.prefix(64))'")
        }
        guard text.utf8.count <= maximumLocaleLength, let language = parts.first,
              [2, 3, 5, 6, 7, 8].contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter })
        else { throw bad() }
        // At most three subtags (language-script-region-variant): the grammar of audiences and the API description
        // say the same, and every iOS locale identifier fits.
        guard parts.count <= 4 else { throw bad() }
        var out = [language.lowercased()]
        for (i, part) in parts.dropFirst().enumerated() {
            guard (1...8).contains(part.count), part.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { throw bad() }
            if i == 0, part.count == 4, part.allSatisfy(\.isLetter) {
                out.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())  // script
            } else if part.count == 2, part.allSatisfy(\.isLetter), !out.contains(where: { $0.count == 1 }) {
                out.append(part.uppercased())  // region
            } else {
                out.append(part.lowercased())
            }
        }
        return out.joined(separator: "-")
    }

    /// An app or OS version: 1–64 printable ASCII characters.
    public static func version(_ text: String, field: String) throws(FieldError) -> String {
        guard !text.isEmpty, text.utf8.count <= maximumVersionLength, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw FieldError(field: field, message: "\(field) must be 1-\(maximumVersionLength) printable ASCII characters")
        }
        return text
    }

    /// Tags: a flat object of at most 32 keys (1–64 characters of `A-Z a-z 0-9 _ -`) whose values are strings (at most
    /// 256 characters), finite numbers or booleans.
    public static func tags(_ json: JSONValue) throws(FieldError) -> [String: TagValue] {
        guard let pairs = json.objectPairs else {
            throw FieldError(field: "tags", message: "tags must be an object of strings, numbers and booleans")
        }
        guard pairs.count <= maximumTags else {
            throw FieldError(field: "tags", message: "tags may have at most \(maximumTags) keys, got \(pairs.count)")
        }
        var out: [String: TagValue] = [:]
        for (key, value) in pairs {
            try tagKey(key)
            guard let tag = TagValue(value) else {
                throw FieldError(field: "tags", message: "tags.\(key) must be a string, a number or a boolean")
            }
            if case .string(let s) = tag, s.unicodeScalars.count > maximumTagValueLength {
                throw FieldError(field: "tags", message: "tags.\(key) is longer than \(maximumTagValueLength) characters")
            }
            if case .number(let d) = tag, !d.isFinite {
                throw FieldError(field: "tags", message: "tags.\(key) must be a finite number")
            }
            out[key] = tag
        }
        return out
    }

    /// A tag key: 1–64 characters of `A-Z a-z 0-9 _ -` (no dots: `tags.KEY` names it in audiences).
    public static func tagKey(_ key: String) throws(FieldError) {
        guard !key.isEmpty, key.utf8.count <= maximumTagKeyLength, key.utf8.allSatisfy({ b in
            (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || b == 0x5f || b == 0x2d
        }) else {
            throw FieldError(
                field: "tags", message: "tags: key '\(key.prefix(80))' must be 1-\(maximumTagKeyLength) characters of A-Z a-z 0-9 _ -")
        }
    }
}
