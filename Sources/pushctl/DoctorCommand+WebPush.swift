import PushCore
import PushSender

extension DoctorCommand {
    /// How long a default push service or a wildcard's representative may take to answer: they are a `warn` when
    /// unreachable (a machine offline, or one whose egress allows only some hosts), so they must not hold the run up.
    static let defaultHostTimeoutMs = 4000

    /// An app's Web Push checks: the VAPID key, the subject, and each push service host it may send to. Exactly listed
    /// hosts (`allowedHosts`) fail when they do not answer; the default push services only warn, never failing a
    /// machine that is offline; wildcards cannot be probed without a subscription's host and are listed as such.
    static func webPush(_ id: String, _ web: WebPushSettings, in config: PushConfiguration, of app: AppSettings) async -> [Check] {
        var checks: [Check] = []
        let key = "app \(id) webpush key"
        do {
            let signer = try VAPIDSigner(pemPath: web.vapidKey, configKey: "apps.\(id).webpush.vapidKey", subject: web.subject)
            checks.append(Check(
                name: key, status: .ok,
                detail: "\(web.vapidKey): a P-256 key, readable by no other user; browsers subscribe with its public key "
                    + "(applicationServerKey) \(signer.publicKey.prefix(12))… (GET /v1/apps/\(id)/webpush/key gives it whole)"))
        } catch {
            checks.append(Check(
                name: key, status: .fail,
                detail: "\(error.message) (make one with `pushctl webpush key new --out FILE`; a new key orphans the "
                    + "subscriptions made with the old one)"))
        }
        if let problem = WebPushSettings.subjectProblem(web.subject) {
            checks.append(Check(name: "app \(id) webpush subject", status: .fail, detail: "\(web.subject): \(problem)"))
        } else {
            checks.append(Check(name: "app \(id) webpush subject", status: .ok, detail: "\(web.subject) (push services contact it about this sender)"))
        }
        let proxy = try? config.proxy(for: app).map { try SenderProxy($0) }
        let policy = web.hostPolicy
        let exact = policy.entries.filter { !$0.isWildcard }
        let probes = await withTaskGroup(of: (Int, WebPushHostProbe).self) { group in
            for (i, entry) in exact.enumerated() {
                group.addTask {
                    let timeout = entry.isConfigured ? 10_000 : defaultHostTimeoutMs
                    return (i, await WebPushHostProbe.run(entry, policy: policy, caFile: web.caFile, proxy: proxy, timeoutMs: timeout))
                }
            }
            var results: [Int: WebPushHostProbe] = [:]
            for await (i, probe) in group { results[i] = probe }
            return results
        }
        for (i, entry) in exact.enumerated() {
            guard let probe = probes[i] else { continue }
            let name = "app \(id) webpush host \(entry)"
            let kind = entry.isConfigured ? "listed in allowedHosts" : "a default push service"
            if let status = probe.status {
                checks.append(Check(name: name, status: .ok, detail: "\(probe.target) answered HTTP \(status) over verified TLS (\(kind))"))
            } else if entry.isConfigured {
                checks.append(Check(
                    name: name, status: .fail,
                    detail: "\(probe.target): \(probe.error ?? "no answer") (listed exactly in apps.\(id).webpush.allowedHosts: "
                        + "start the push service there, or remove the entry)"))
            } else {
                checks.append(Check(
                    name: name, status: .warn,
                    detail: "\(probe.target): \(probe.error ?? "no answer") (\(kind): subscriptions of browsers that use it "
                        + "cannot be sent to from this host until it is reachable)"))
            }
        }
        let wildcards = policy.entries.filter(\.isWildcard).map(\.description)
        if !wildcards.isEmpty {
            checks.append(Check(
                name: "app \(id) webpush hosts \(wildcards.joined(separator: ", "))", status: .ok,
                detail: "wildcards, not probed (each subscription's host is resolved and its address checked when it is sent to)"))
        }
        return checks
    }
}
