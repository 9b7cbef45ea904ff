import Foundation

/// What the device says about itself at launch — time zone, locale, app and OS version — filled in at every
/// launch as Parse's installation did, so the server's audiences and local-time sends see current values without
/// the app writing a line. Injectable: tests (and apps with their own notion of locale) pass their own.
public struct DeviceFacts: Sendable, Equatable {
    /// An IANA time zone name, or nil.
    public var timeZone: String?
    /// A BCP 47 language tag, or nil.
    public var locale: String?
    /// The app's version, or nil.
    public var appVersion: String?
    /// The OS version, or nil.
    public var osVersion: String?

    /// Creates one.
    public init(timeZone: String? = nil, locale: String? = nil, appVersion: String? = nil, osVersion: String? = nil) {
        self.timeZone = timeZone
        self.locale = locale
        self.appVersion = appVersion
        self.osVersion = osVersion
    }

    /// The running process's: `TimeZone.current`, `Locale.current` as BCP 47, the main bundle's
    /// `CFBundleShortVersionString` (nil where there is none, as on Linux: pass it), the OS version.
    public static var current: DeviceFacts {
        let v = ProcessInfo.processInfo.operatingSystemVersion
        return DeviceFacts(
            timeZone: timeZoneName(TimeZone.current.identifier),
            locale: bcp47(Locale.current.identifier),
            appVersion: Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String,
            osVersion: v.patchVersion == 0 ? "\(v.majorVersion).\(v.minorVersion)" : "\(v.majorVersion).\(v.minorVersion).\(v.patchVersion)")
    }

    /// `identifier` when it is a tz database name; nil for a fixed offset (`GMT+2`), which the server refuses.
    static func timeZoneName(_ identifier: String) -> String? {
        if identifier.hasPrefix("GMT") && identifier != "GMT" { return nil }
        return identifier.isEmpty ? nil : identifier
    }

    /// A Foundation locale identifier (`de_DE`, `en_US@calendar=buddhist`, `en_US_POSIX`) as the BCP 47 tag the
    /// server takes (`de-DE`, `en-US`, `en`): keywords dropped, `_` as `-`, at most language-script-region.
    static func bcp47(_ identifier: String) -> String? {
        let base = identifier.split(separator: "@").first.map(String.init) ?? ""
        let parts = base.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy(\.isLetter) else { return nil }
        var tag = [language.lowercased()]
        for part in parts.dropFirst().prefix(2) {
            if part.count == 4, part.allSatisfy(\.isLetter) {
                tag.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())  // script
            } else if (part.count == 2 && part.allSatisfy(\.isLetter)) || (part.count == 3 && part.allSatisfy(\.isNumber)) {
                tag.append(part.uppercased())  // region
            } else {
                break
            }
        }
        return tag.joined(separator: "-")
    }
}
