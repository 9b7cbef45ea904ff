import Foundation
import PushCore

/// The system's tz database (`$TZDIR/tzdata.zi`, else `/usr/share/zoneinfo/tzdata.zi`, from Debian's `tzdata`), read
/// once on first use: the names a registration's `timeZone`, an app's `defaultTimeZone` and a local-time job's waves
/// are checked against. Foundation's `TimeZone.knownTimeZoneIdentifiers` is not used: on Linux it lacks names iOS
/// reports (`Asia/Kolkata`, `Etc/UTC`). Without a `tzdata.zi` the process falls back to Foundation's list (no links).
public enum SystemTimeZones {
    /// The file read (nil when none was found and Foundation's list is used).
    public static let path: String? = {
        let dir = ProcessInfo.processInfo.environment["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
        let file = dir + "/tzdata.zi"
        return FileManager.default.isReadableFile(atPath: file) ? file : nil
    }()

    /// The database's names.
    public static let names: TimeZoneNames = {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return .foundation() }
        let parsed = TimeZoneNames(tzdataZi: text)
        return parsed.zones.isEmpty ? .foundation() : parsed
    }()
}
