import ArgumentParser
import PushCore
import PushStore

/// `--user U` and `--where CLAUSE` (repeatable): the filter language of README "Audiences and local time", as the
/// API's `"audience"` takes it. A bad clause exits 2 naming it; nothing is stored or sent.
struct AudienceOptions: ParsableArguments {
    @Option(help: "Only this user's devices (an index lookup).") var user: String?
    @Option(name: .customLong("where"), help: "A clause devices must match, e.g. 'appVersion>=2.3' or 'locale=de*'; repeatable (all must hold).")
    var clauses: [String] = []

    /// True when any was given.
    var isGiven: Bool { user != nil || !clauses.isEmpty }

    /// The audience, or nil when none was given.
    func audience() throws -> Audience? {
        guard isGiven else { return nil }
        do { return try Audience.parse(where: clauses, user: user) } catch {
            throw CLIError.usage(error.clause == "user" ? "--\(error.message)" : "--\(error.message)")
        }
    }
}

extension RegistryStore {
    /// Every token of `app` in `audience` (and `environment`), read in keyset pages: what `pushctl send --user/--where`
    /// sends to.
    func audienceTokens(app: String, audience: Audience, environment: APNsEnvironment?) throws -> [DeviceToken] {
        var record = BroadcastRecord(id: "audience", app: app, payload: [], pushType: .alert, priority: .immediate, environment: environment)
        record.targeting = JobTargeting(audience: audience)
        var out: [DeviceToken] = []
        var after = ""
        while true {
            let page = try deliveryStore.targets(of: record, after: after, through: BroadcastShard.keySpaceEnd, limit: 5000)
            out += page.map(\.token)
            guard page.count == 5000, let last = page.last else { return out }
            after = last.token.hex
        }
    }
}
