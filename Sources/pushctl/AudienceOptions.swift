import ArgumentParser
import PushCore
import PushStore

/// `--user U` and `--where CLAUSE` (repeatable): the filter language of README "Audiences and local time", as the
/// API's `"audience"` takes it. A bad clause exits 2 naming it; nothing is stored or sent.
struct AudienceOptions: ParsableArguments {
    @Option(help: "Only this user's devices (an index lookup).") var user: String?
    @Option(name: .customLong("where"), help: "A clause devices must match, e.g. 'appVersion>=2.3' or 'locale=de*'; repeatable (all must hold).")
    var clauses: [String] = []
    @Option(help: "Only devices of this push service: apns, webpush, fcm, hms, harmonyos or unifiedpush (the same as --where 'service = NAME').")
    var service: String?

    /// True when any was given.
    var isGiven: Bool { user != nil || !clauses.isEmpty || service != nil }

    /// The audience, or nil when none was given.
    func audience() throws -> Audience? {
        guard isGiven else { return nil }
        var clauses = clauses
        if let service {
            guard PushService(rawValue: service) != nil else {
                throw CLIError.usage("--service must be one of \(PushService.allCases.map(\.rawValue).joined(separator: ", ")), not '\(service)'")
            }
            clauses.append("service = " + service)
        }
        do { return try Audience.parse(where: clauses, user: user) } catch {
            throw CLIError.usage(error.clause == "user" ? "--\(error.message)" : "--\(error.message)")
        }
    }
}

extension RegistryStore {
    /// Every device of `app` in `audience` (and `environment`), read in keyset pages: what `pushctl send --user/--where`
    /// sends to, each device with its push service.
    func audienceTargets(app: String, audience: Audience, environment: APNsEnvironment?) throws -> [DeliveryTarget] {
        var record = BroadcastRecord(id: "audience", app: app, payload: [], pushType: .alert, priority: .immediate, environment: environment)
        record.targeting = JobTargeting(audience: audience)
        var out: [DeliveryTarget] = []
        var after = ""
        while true {
            let page = try deliveryStore.targets(of: record, after: after, through: BroadcastShard.keySpaceEnd, limit: 5000)
            out += page
            guard page.count == 5000, let last = page.last else { return out }
            after = last.token.hex
        }
    }
}

extension RegistryStore {
    /// The listed tokens as devices to send to: a registered one with its push service and subscription (a Web
    /// Push device's key reaches its endpoint), any other as an APNs token (sending to tokens nobody registered
    /// is what `pushctl send --token` is for).
    func listedTargets(app: String, tokens: [DeviceToken]) throws -> [DeliveryTarget] {
        try tokens.map { token in
            guard let device = try device(app: app, token: token) else { return DeliveryTarget(token: token, environment: nil) }
            var target = DeliveryTarget(token: token, environment: nil)
            target.service = device.service
            target.webPush = device.webPush
            return target
        }
    }
}
