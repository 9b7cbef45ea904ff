import Foundation
import PushCore
import PushSender

/// Whether one app's Web Push, FCM, HMS or UnifiedPush credentials load, and what they are, for `/healthz/details` and
/// the console's Apps tab: read when the server starts and at each reload (the files' contents do not change without
/// one reaching the senders), never per request. APNs' part is ``PushServer/CredentialStatus``, kept as it was for its clients.
public struct ServiceHealth: Sendable, Equatable {
    /// The service.
    public var service: PushService
    /// The credentials loaded (an app whose service's credentials did not load is degraded: its devices are
    /// deferred, `CredentialsUnavailable`, until the file is fixed and the server reloaded).
    public var loaded: Bool
    /// What the service's credentials are: Web Push's `publicKey` (the applicationServerKey) and `subject`, FCM's
    /// `project`, `clientEmail` and `endpoint`, HMS's `clientId` and `endpoint`, UnifiedPush's `publicKey` (the
    /// `vapid` its apps hand their distributor) and `subject`.
    public var facts: [(String, String)]
    /// The facts that are lists: UnifiedPush's `exemptHosts` (what the operator exempted from the address check).
    public var lists: [(String, [String])]
    /// Why they did not load.
    public var error: String?

    public init(
        service: PushService, loaded: Bool, facts: [(String, String)] = [], lists: [(String, [String])] = [], error: String? = nil
    ) {
        self.service = service
        self.loaded = loaded
        self.facts = facts
        self.lists = lists
        self.error = error
    }

    public static func == (lhs: ServiceHealth, rhs: ServiceHealth) -> Bool {
        lhs.service == rhs.service && lhs.loaded == rhs.loaded && lhs.error == rhs.error
            && lhs.facts.map(\.0) == rhs.facts.map(\.0) && lhs.facts.map(\.1) == rhs.facts.map(\.1)
            && lhs.lists.map(\.0) == rhs.lists.map(\.0) && lhs.lists.map(\.1) == rhs.lists.map(\.1)
    }

    /// The app's Web Push, FCM, HMS, HarmonyOS and UnifiedPush health, loading each file as its sender would
    /// (blocking: call it off the cooperative pool). UnifiedPush's distributors are not probed: each user picks
    /// their own.
    public static func loading(app id: String, _ settings: AppSettings) -> [ServiceHealth] {
        var health: [ServiceHealth] = []
        if let web = settings.webPush {
            do {
                let signer = try VAPIDSigner(pemPath: web.vapidKey, configKey: "apps.\(id).webpush.vapidKey", subject: web.subject)
                health.append(ServiceHealth(
                    service: .webpush, loaded: true, facts: [("publicKey", signer.publicKey), ("subject", web.subject)]))
            } catch {
                health.append(ServiceHealth(service: .webpush, loaded: false, error: error.message))
            }
        }
        if let fcm = settings.fcm {
            do {
                let account = try FCMServiceAccount(path: fcm.serviceAccount, configurationKey: "apps.\(id).fcm.serviceAccount")
                health.append(ServiceHealth(
                    service: .fcm, loaded: true,
                    facts: [("project", account.projectId), ("clientEmail", account.clientEmail), ("endpoint", fcm.endpoint.description)]))
            } catch {
                health.append(ServiceHealth(service: .fcm, loaded: false, facts: [("endpoint", fcm.endpoint.description)], error: error.message))
            }
        }
        if let hms = settings.hms {
            let facts: [(String, String)] = [("clientId", hms.clientId), ("endpoint", hms.endpoint.description)]
            do {
                _ = try HMSClientCredentials(
                    clientId: hms.clientId, secretFile: hms.clientSecretFile, tokenURL: "",
                    configurationKey: "apps.\(id).hms.clientSecretFile")
                health.append(ServiceHealth(service: .hms, loaded: true, facts: facts))
            } catch {
                health.append(ServiceHealth(service: .hms, loaded: false, facts: facts, error: error.message))
            }
        }
        if let harmonyos = settings.harmonyos {
            var facts: [(String, String)] = [
                ("projectId", harmonyos.projectId), ("category", harmonyos.category), ("endpoint", harmonyos.endpoint.description),
            ]
            do {
                let account = try HarmonyOSServiceAccount(
                    path: harmonyos.serviceAccount, configurationKey: "apps.\(id).harmonyos.serviceAccount")
                facts.append(("subAccount", account.subAccount))
                health.append(ServiceHealth(service: .harmonyos, loaded: true, facts: facts))
            } catch {
                health.append(ServiceHealth(service: .harmonyos, loaded: false, facts: facts, error: error.message))
            }
        }
        if let up = settings.unifiedPush {
            let exempt = [("exemptHosts", up.exemptHosts)]
            do {
                let signer = try VAPIDSigner(pemPath: up.vapidKey, configKey: "apps.\(id).unifiedpush.vapidKey", subject: up.subject)
                health.append(ServiceHealth(
                    service: .unifiedpush, loaded: true, facts: [("publicKey", signer.publicKey), ("subject", up.subject)],
                    lists: exempt))
            } catch {
                health.append(ServiceHealth(
                    service: .unifiedpush, loaded: false, facts: [("subject", up.subject)], lists: exempt, error: error.message))
            }
        }
        return health
    }

    /// The `/healthz/details` object.
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [("loaded", .bool(loaded))]
        fields += facts.map { ($0.0, .string($0.1)) }
        fields += lists.map { ($0.0, .array($0.1.map { .string($0) })) }
        if let error { fields.append(("error", .string(error))) }
        return .object(fields)
    }
}
