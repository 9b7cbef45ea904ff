import ArgumentParser
import Foundation
import PushCore
import PushSender
import PushStore

/// `pushctl doctor`: the checks an operator runs first, one line each.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, each service of each app (credentials, endpoints, clock), and the database.",
        discussion: """
            One line per check, `ok`, `warn` or `FAIL`; exits 1 when any check failed (0 otherwise), so it fits a \
            deploy script. Checks: the configuration file (it loads: no unknown key, no secret file other users \
            can read; an app that does not load is reported and the others are still checked); per app and service: \
            APNs' credentials (kind, topics, environment, days to expiry), its endpoint, reached with a harmless \
            request (a notification to an all-zero token, which no device has) verified with the system's trust \
            store (or the app's caFile), naming the root the chain ends at, and the clock against the endpoint's \
            HTTP Date header (token authentication fails when the clock is off; more than 60 s fails); Web Push's \
            VAPID key (a P-256 key), its subject, and each push service host it may send to (resolved, its address \
            checked, TLS verified; a host listed exactly in allowedHosts fails when it does not answer, the default \
            push services only warn, wildcards are not probed); FCM's service account (the file, its project) and \
            one grant from its token endpoint; HMS's client secret and one grant; UnifiedPush's VAPID key, its subject and \
            its exempt hosts (distributors are not probed: each user picks their own); the database (reachable, schema \
            version, free space).
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print the checks as a JSON array of {check, status, detail}.") var json = false

    /// Clock skew past this fails. Apple documents only that a provider token's `iat` must be no older than an
    /// hour and that APNs refuses tokens it considers expired or not yet valid; it gives no tolerance for a
    /// clock ahead. 60 s is far inside an hour, and no host keeping time (NTP: milliseconds) comes near it, so
    /// a skew past it means the clock is not synchronised and will drift on.
    static let maxSkewSeconds = 60.0

    /// One check's outcome.
    struct Check {
        enum Status: String { case ok, warn, fail }
        var name: String
        var status: Status
        var detail: String
    }

    func run() async throws {
        var checks: [Check] = []
        defer { report(checks) }
        let loaded = DoctorConfiguration.load(global)
        checks.append(loaded.check)
        guard let config = loaded.configuration else { throw ExitCode(1) }
        for (id, app) in config.apps.sorted(by: { $0.key < $1.key }) {
            if let notice = Self.flatKeysNotice(id, app) { checks.append(notice) }
            // One group of lines per service the app has, in the order the configuration names them.
            if let apns = app.apns {
                checks.append(Self.credentials(id, apns))
                let probe = await EndpointProbe.run(apns, of: app, in: config)
                checks += Self.endpoint(id, apns, probe)
            }
            if let web = app.webPush { checks += await Self.webPush(id, web, in: config, of: app) }
            if let fcm = app.fcm { checks += await Self.fcm(id, fcm, in: config, of: app) }
            if let hms = app.hms { checks += await Self.hms(id, hms, in: config, of: app) }
            if let harmonyos = app.harmonyos { checks += Self.harmonyos(id, harmonyos) }
            if let up = app.unifiedPush { checks += Self.unifiedPush(id, up) }
        }
        checks.append(await Self.database(config))
        if checks.contains(where: { $0.status == .fail }) { throw ExitCode(1) }
    }

    /// Prints the checks: one line each, or a JSON array.
    func report(_ checks: [Check]) {
        if json {
            let items = checks.map { check in
                JSONValue.object([("check", .string(check.name)), ("status", .string(check.status.rawValue)), ("detail", .string(check.detail))])
            }
            print(JSONValue.array(items).encodedString)
        } else {
            for check in checks {
                let status = check.status == .fail ? "FAIL" : check.status.rawValue
                print("\(status.padding(toLength: 5, withPad: " ", startingAt: 0)) \(check.name): \(check.detail)")
            }
        }
    }

    /// A notice for an app whose APNs keys are flat (the form before `apps.ID.apns`): it loads as before; the
    /// section is what an app with several services reads best.
    static func flatKeysNotice(_ id: String, _ app: AppSettings) -> Check? {
        guard app.apnsKeysAreFlat else { return nil }
        return Check(
            name: "app \(id) configuration", status: .ok,
            detail: "notice: the APNs keys (topic, auth, endpoint, …) sit at apps.\(id)'s top level, the older form, which "
                + "still loads; move them into apps.\(id).apns (docs/configuration.md)")
    }

    /// The app's APNs credentials as the sender loads them (``CredentialHealth``).
    static func credentials(_ id: String, _ app: APNsSettings) -> Check {
        let name = "app \(id) apns credentials"
        let health: CredentialHealth
        do { health = CredentialHealth(try makeCredentials(for: app), now: Date()) } catch {
            return Check(name: name, status: .fail, detail: "\(error)")
        }
        guard let certificate = health.certificate else {
            return Check(name: name, status: .ok, detail: "token (.p8), key id \(health.keyId ?? "?"), team \(health.teamId ?? "?"); does not expire")
        }
        let environment = certificate.environment?.rawValue ?? "unknown environment"
        let topics = certificate.topics.isEmpty ? "no topics listed" : "topics \(certificate.topics.joined(separator: ", "))"
        let days = health.daysLeft ?? 0
        let facts = "certificate (.p12) \(certificate.subject), \(environment), \(topics)"
        if health.expired {
            return Check(name: name, status: .fail, detail: "\(facts): expired on \(certificate.notAfterISO)")
        }
        return Check(name: name, status: days < 30 ? .warn : .ok, detail: "\(facts); \(days) days to expiry (\(certificate.notAfterISO))")
    }

    /// The endpoint's trust and clock, from one probe.
    static func endpoint(_ id: String, _ app: APNsSettings, _ probe: EndpointProbe, now: Date = Date()) -> [Check] {
        let name = "app \(id) apns endpoint"
        guard probe.error == nil, let status = probe.status else {
            var detail = "\(probe.target): \(probe.error ?? "no answer")"
            // CURLE_PEER_FAILED_VERIFICATION: the chain does not end at a root the trust in use holds.
            if probe.errorCode == 60 {
                detail += app.caFile == nil
                    ? "; the system trust store lacks the root of this endpoint's chain (Apple moved APNs to the USERTrust RSA "
                        + "Certification Authority root in 2025: install or update ca-certificates)"
                    : "; the endpoint's chain does not end at the CA in \(probe.trust)"
            }
            return [Check(name: name, status: .fail, detail: detail)]
        }
        var checks = [Check(
            name: name, status: .ok,
            detail: "\(probe.target) answered HTTP \(status); verified with \(probe.trust), root: \(probe.root ?? "not named")")]
        guard let date = probe.serverDate else {
            checks.append(Check(name: "app \(id) apns clock", status: .warn, detail: "\(probe.target) sent no Date header: clock not checked"))
            return checks
        }
        let skew = now.timeIntervalSince(date)
        let said = abs(skew) < 1 ? "within 1 s of" : "\(Int(abs(skew).rounded())) s \(skew > 0 ? "ahead of" : "behind")"
        let within = abs(skew) <= maxSkewSeconds
        checks.append(Check(
            name: "app \(id) apns clock", status: within ? .ok : .fail,
            detail: "this host's clock is \(said) \(probe.target)'s Date"
                + (within ? "" : " (more than \(Int(maxSkewSeconds)) s: token authentication fails; synchronise the clock, e.g. systemd-timesyncd)")))
        return checks
    }

    /// The database: reachable, its schema version, and (SQLite) the free space beside its file.
    static func database(_ config: PushConfiguration) async -> Check {
        let registry: any RegistryStore
        do { registry = try RegistryStores.openForCommand(config) } catch {
            return Check(name: "database", status: .fail, detail: error.message)
        }
        let version: Int64
        do { version = try await registry.run { try $0.schemaVersion() } } catch {
            return Check(name: "database", status: .fail, detail: "\(config.database): \(error.message)")
        }
        guard !PushConfiguration.isPostgresURL(config.database) else {
            return Check(name: "database", status: .ok, detail: "\(config.database): reachable, schema version \(version)")
        }
        var fs = statvfs()
        let directory = (config.database as NSString).deletingLastPathComponent
        guard statvfs(directory, &fs) == 0 else {
            return Check(name: "database", status: .ok, detail: "\(config.database): schema version \(version); free space unknown")
        }
        let freeMiB = Int64(fs.f_bavail) * Int64(fs.f_frsize) / (1024 * 1024)
        return Check(
            name: "database", status: freeMiB < 1024 ? .warn : .ok,
            detail: "\(config.database): schema version \(version), \(freeMiB) MiB free")
    }
}
