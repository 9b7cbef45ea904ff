import Foundation
import Hummingbird
import PushCore
import PushSender

extension PushServer {
    func addInboxRoutes(to router: Router<BasicRequestContext>) {
        router.get("/v1/apps/:app/inbox") { request, context in
            try await self.listInbox(request, app: try context.parameters.require("app"))
        }
        router.delete("/v1/apps/:app/inbox") { request, context in
            try await self.clearInbox(request, app: try context.parameters.require("app"))
        }
    }

    /// `GET /v1/apps/{app}/inbox[?service=&device=&limit=]` (send keys): what the built-in simulator accepted for this
    /// app, newest first — APNs notifications to its topic, Web Push messages signed with its VAPID key, FCM messages
    /// to its project — each with the simulator's record (the `--record` line) and its `content` as the device gets
    /// it: APNs' payload, Web Push's decrypted plaintext (parsed when it is JSON), FCM's message. `device` narrows to
    /// one device (an APNs token, a Web Push endpoint, an FCM token); `limit` 1–1000, default 100. 404
    /// `inbox_unavailable` when this server runs no built-in simulator.
    func listInbox(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        let limit = try QueryLimit.parse(request, default: 100, maximum: 1000)
        let service = try request.uri.queryParameters.get("service").map { text throws(APIError) -> PushService in
            guard let service = PushService(rawValue: text) else {
                throw APIError.badRequest("service", "service must be apns, webpush, fcm, hms, harmonyos or unifiedpush")
            }
            return service
        }
        let device: String? = request.uri.queryParameters.get("device").map { String($0) }
        // The longest device name is a Web Push endpoint's (at most 2048) or an FCM token's (4096), as documented.
        if let device, device.utf8.count > 4096 { throw APIError.badRequest("device", "device is at most 4096 characters") }
        let inbox = try requireInbox()
        let keys = try await inboxKeys(app: app, settings)
        let cleared = inboxCleared.withLock { $0[app] ?? 0 }
        let base = "https://\(configuration.simulator.hostAndPort)/wp/"
        let upBase = "https://\(configuration.simulator.hostAndPort)/up/"
        var items: [JSONValue] = []
        for entry in inbox.inbox(limit: inbox.inboxCapacity) where entry.sequence > cleared && keys.matches(entry) {
            if let service, entry.service != service { continue }
            let shown = entry.service == .webpush ? base + entry.device
                : entry.service == .unifiedpush ? upBase + entry.device : entry.device
            if let device, device != shown { continue }
            items.append(Self.inboxItem(entry, device: shown))
            if items.count == limit { break }
        }
        return JSONResponse.make(.ok, .object([("entries", .array(items)), ("capacity", .int(Int64(inbox.inboxCapacity)))]))
    }

    /// `DELETE /v1/apps/{app}/inbox` (send keys): hides this app's entries received so far (the simulator's other apps
    /// keep theirs); 204.
    func clearInbox(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let inbox = try requireInbox()
        let newest = inbox.inbox(limit: 1).first?.sequence ?? 0
        inboxCleared.withLock { $0[app] = max($0[app] ?? 0, newest) }
        return Response(status: .noContent)
    }

    private func requireInbox() throws(APIError) -> any DevelopmentInbox {
        guard let inbox = developmentInbox else {
            throw APIError(
                .notFound, "inbox_unavailable",
                "the development inbox shows what the built-in simulator received; this server runs none (an app's endpoint `simulator`, as `make run`)")
        }
        return inbox
    }

    /// One entry as the API shows it.
    static func inboxItem(_ entry: InboxEntry, device: String) -> JSONValue {
        let record = entry.record
        let content: JSONValue = switch entry.service {
        case .apns: record["payload"] ?? .null
        case .webpush, .unifiedpush:
            record["plaintext"]?.stringValue.flatMap { try? JSONValue(parsing: Array($0.utf8)) } ?? record["plaintext"] ?? .null
        case .fcm, .hms, .harmonyos: record["message"] ?? .null
        }
        return .object([
            ("sequence", .int(entry.sequence)), ("service", .string(entry.service.rawValue)), ("device", .string(device)),
            ("receivedAt", .string(Timestamp.rfc3339(ms: entry.receivedAtMs, milliseconds: true))),
            ("content", content), ("record", record),
        ])
    }

    /// What ties the simulator's entries to `app`: its APNs topic, its VAPID public key, its FCM project, its HMS
    /// client ID, its UnifiedPush VAPID public key.
    struct InboxKeys {
        var topic: String?
        var vapidKey: String?
        var project: String?
        var hmsClientId: String?
        var harmonyosProjectId: String?
        var unifiedPushKey: String?

        func matches(_ entry: InboxEntry) -> Bool {
            switch entry.service {
            case .apns: topic.map { entry.appKey == $0 || entry.appKey.hasPrefix($0 + ".") } ?? false
            case .webpush: vapidKey == entry.appKey
            case .fcm: project == entry.appKey
            case .hms: hmsClientId == entry.appKey
            case .harmonyos: harmonyosProjectId == entry.appKey
            case .unifiedpush: unifiedPushKey == entry.appKey
            }
        }
    }

    private func inboxKeys(app: String, _ settings: AppSettings) async throws -> InboxKeys {
        var keys = InboxKeys(
            topic: settings.apns?.topic, hmsClientId: settings.hms?.clientId, harmonyosProjectId: settings.harmonyos?.projectId)
        if let web = settings.webPush { keys.vapidKey = try? await vapidPublicKey(app: app, web) }
        if let fcm = settings.fcm { keys.project = await fcmProject(fcm) }
        if let up = settings.unifiedPush {
            keys.unifiedPushKey = try? await vapidPublicKey(app: app, vapidKey: up.vapidKey, subject: up.subject, section: "unifiedpush")
        }
        return keys
    }

    /// The FCM project of a service account file, read once per file (nil when it cannot be read: its messages are
    /// then not shown, and the sender says why at a send).
    private func fcmProject(_ fcm: FCMSettings) async -> String? {
        if let known = fcmProjects.withLock({ $0[fcm.serviceAccount] }) { return known }
        let path = fcm.serviceAccount
        let project = try? await registry.executor.run { () throws(StoreError) -> String? in
            try? FCMServiceAccount(path: path).projectId
        }
        guard let project = project ?? nil else { return nil }
        fcmProjects.withLock { $0[path] = project }
        return project
    }
}
