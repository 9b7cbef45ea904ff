import PushCore

/// The installation columns of one row, with the zone history that local-time waves read.
struct StoredInstallation: Equatable {
    var fields: Installation
    var zoneHistory: TimeZoneHistory
    var zoneChangedMs: Int64?

    init(fields: Installation, zoneHistory: TimeZoneHistory = TimeZoneHistory(), zoneChangedMs: Int64? = nil) {
        self.fields = fields
        self.zoneHistory = zoneHistory
        self.zoneChangedMs = zoneChangedMs
    }

    /// What a registration leaves: the fields after `update`; a device replacing an old token takes the old one's
    /// zone history too (it is the same installation); a zone that changes is recorded in the history.
    static func after(_ update: InstallationUpdate, current: StoredInstallation?, replaced: StoredInstallation?, now: Int64)
        -> StoredInstallation
    {
        let fields = update.applied(to: current?.fields, replaced: replaced?.fields)
        var next = current ?? replaced.map { StoredInstallation(fields: $0.fields, zoneHistory: $0.zoneHistory, zoneChangedMs: $0.zoneChangedMs) }
            ?? StoredInstallation(fields: Installation())
        let before = next.fields.timeZone
        let hadRow = current != nil || replaced != nil
        next.fields = fields
        if hadRow, before != fields.timeZone {
            next.zoneHistory = next.zoneHistory.recording(old: before, atMs: now)
            next.zoneChangedMs = now
        }
        return next
    }

    /// Whether a registration writes installation columns at all: it gives a field, or it replaces a token that had
    /// some (old→new replacement carries them over). Otherwise the device's columns stay as they are (NULL for a new one).
    static func isWritten(by update: InstallationUpdate, replaced: StoredInstallation?) -> Bool {
        !update.isEmpty || !(replaced?.fields.isEmpty ?? true)
    }

    /// What a registration that creates its device stores (nil: nothing, the columns stay NULL): ``after(_:current:replaced:now:)``
    /// with no stored row, known before the write, so the stores put it in the device's INSERT — one statement per
    /// new device, not an INSERT and then an UPDATE of the same row.
    static func forNewDevice(_ update: InstallationUpdate, replaced: StoredInstallation?, now: Int64) -> StoredInstallation? {
        isWritten(by: update, replaced: replaced) ? after(update, current: nil, replaced: replaced, now: now) : nil
    }

    /// The values both stores write, in their column order (``Columns/names``).
    var columns: Columns {
        Columns(
            installation: fields.installation, user: fields.user, timeZone: fields.timeZone, locale: fields.locale,
            appVersion: fields.appVersion, appVersionKey: fields.appVersion.flatMap(VersionOrder.key),
            osVersion: fields.osVersion, osVersionKey: fields.osVersion.flatMap(VersionOrder.key),
            tags: fields.tagsJSON, zoneHistory: zoneHistory.storedText, zoneChangedMs: zoneChangedMs)
    }

    /// One device's installation columns as written (tags and zone history as JSON text; NULL: not set).
    struct Columns {
        /// The columns, in the order of the properties (and of ``text`` then `zoneChangedMs`).
        static let names = [
            "installation", "user_id", "time_zone", "locale", "app_version", "app_version_key", "os_version",
            "os_version_key", "tags", "tz_history", "tz_changed_ms",
        ]
        var installation, user, timeZone, locale, appVersion, appVersionKey, osVersion, osVersionKey, tags, zoneHistory: String?
        var zoneChangedMs: Int64?

        /// The text columns in ``names`` order (all but the last).
        var text: [String?] {
            [installation, user, timeZone, locale, appVersion, appVersionKey, osVersion, osVersionKey, tags, zoneHistory]
        }
    }
}
