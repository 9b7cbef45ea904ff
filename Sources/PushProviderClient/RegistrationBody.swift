import Foundation

/// The body of one `POST /v1/apps/{app}/devices`: the token, the old token it replaces, and only the fields that
/// differ between what the server acknowledged and what the app wants now. The server keeps a field left out, so
/// sending less is both cheaper and safer (a stale copy cannot overwrite a newer value set elsewhere); a field the
/// app cleared goes out as `null`, which clears it there.
struct RegistrationBody: Encodable, Equatable {
    /// A field's change: set to a value, or cleared.
    enum Change<Value: Encodable & Equatable>: Equatable {
        case set(Value)
        case clear
    }

    var token: String
    var oldToken: String?
    var channels: [String]?
    var environment: Change<String>?
    var installation: Change<String>?
    var user: Change<String>?
    var userAuth: String?
    var timeZone: Change<String>?
    var locale: Change<String>?
    var appVersion: Change<String>?
    var osVersion: Change<String>?
    var tags: Change<[String: TagValue]>?

    /// The request that takes the server from `acknowledged` (nil: it has never acknowledged this installation) to
    /// `desired`; nil when there is nothing to send or no token to send it for.
    ///
    /// - A new token replaces the acknowledged one in the same request (`oldToken`), so the server moves the device
    ///   (channels, user, every field) to it in one transaction; three rotations offline are one replacement from
    ///   the last acknowledged token to the newest.
    /// - A first registration sends every field the app has, and its channels even when empty.
    init?(from acknowledged: InstallationFields?, to desired: InstallationFields) {
        guard let token = desired.token else { return nil }
        let base = acknowledged ?? InstallationFields()
        self.token = token
        if let old = acknowledged?.token, old != token { oldToken = old }

        func change(_ old: String?, _ new: String?) -> Change<String>? {
            guard old != new else { return nil }
            return new.map(Change.set) ?? .clear
        }
        if acknowledged == nil || base.channels != desired.channels { channels = desired.channels }
        environment = desired.environment != base.environment
            ? .set(desired.environment?.rawValue ?? "") : nil  // "" is the app's default on the server
        installation = change(base.installation, desired.installation)
        user = change(base.user, desired.user)
        if case .set = user { userAuth = desired.userAuth }
        timeZone = change(base.timeZone, desired.timeZone)
        locale = change(base.locale, desired.locale)
        appVersion = change(base.appVersion, desired.appVersion)
        osVersion = change(base.osVersion, desired.osVersion)
        if base.tags != desired.tags { tags = desired.tags.isEmpty ? .clear : .set(desired.tags) }

        let tokenChanged = acknowledged?.token != token
        let fieldsChanged = channels != nil || environment != nil || installation != nil || user != nil
            || timeZone != nil || locale != nil || appVersion != nil || osVersion != nil || tags != nil
        guard tokenChanged || fieldsChanged else { return nil }
    }

    private enum Key: String, CodingKey {
        case token, oldToken, channels, environment, installation, user, userAuth, timeZone, locale, appVersion, osVersion, tags
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(token, forKey: .token)
        try c.encodeIfPresent(oldToken, forKey: .oldToken)
        try c.encodeIfPresent(channels, forKey: .channels)
        func put<V>(_ change: Change<V>?, _ key: Key) throws {
            switch change {
            case .set(let value)?: try c.encode(value, forKey: key)
            case .clear?: try c.encodeNil(forKey: key)
            case nil: break
            }
        }
        try put(environment, .environment)
        try put(installation, .installation)
        try put(user, .user)
        try c.encodeIfPresent(userAuth, forKey: .userAuth)
        try put(timeZone, .timeZone)
        try put(locale, .locale)
        try put(appVersion, .appVersion)
        try put(osVersion, .osVersion)
        try put(tags, .tags)
    }

    /// The JSON (keys sorted, so the same change is the same bytes).
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}
