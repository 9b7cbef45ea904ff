import Foundation
import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addLiveActivityRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/live-activities/start") { request, context in
            try await self.startActivities(request, app: try context.parameters.require("app"))
        }
        router.post("/v1/apps/:app/live-activities/activities/:activity/update") { request, context in
            try await self.sendToActivity(
                request, app: try context.parameters.require("app"), activity: try context.parameters.require("activity"), event: .update)
        }
        router.post("/v1/apps/:app/live-activities/activities/:activity/end") { request, context in
            try await self.sendToActivity(
                request, app: try context.parameters.require("app"), activity: try context.parameters.require("activity"), event: .end)
        }
    }

    /// `POST …/live-activities/start` (send keys) → 202 `{"id","state","devices"}`: a job that sends the start event to
    /// push-to-start tokens — the listed `tokens`, or those registered for the content's `attributes-type` (all, or in
    /// `channel`, optionally of one `environment`). It runs through the broadcast engine: resumable, pruned, logged.
    func startActivities(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        try Self.requireTokenAuth(settings, app: app)
        let bytes = try await jsonBody(request)
        let body = try LiveActivityBody.parse(
            bytes, kind: .start, payloadLimit: settings.apns?.payloadLimit, nowSeconds: Int64(now().timeIntervalSince1970))
        let type = body.content.attributesType ?? ""
        let tokens: [DeviceToken]
        switch body.target {
        case .tokens(let list)?:
            if body.environment != nil { throw APIError.badRequest("environment", "'environment' selects registered tokens; listed tokens are sent as given") }
            tokens = list
        case .channel(let name)?:
            if let problem = ChannelNames.problem(name) { throw APIError.badRequest("channel", problem) }
            tokens = try await pushToStartTokens(app: app, type: type, channel: name, environment: body.environment)
        case .all?, nil:
            tokens = try await pushToStartTokens(app: app, type: type, channel: nil, environment: body.environment)
        case .audience(let audience)?:
            // The audience picks devices; their installations' push-to-start tokens for the type get the start.
            let environment = body.environment
            tokens = try await registry.run {
                try $0.pushToStartTokens(app: app, attributesType: type, audience: audience, environment: environment)
            }
        }
        return try await storeActivityJob(app: app, body: body, tokens: tokens, what: "push-to-start tokens for \(type)")
    }

    /// `POST …/live-activities/activities/{activity}/update|end` (send keys) → 202 `{"id","state","devices"}`: a job
    /// that sends the event to the activity's update token. An end also removes the activity's update tokens from the
    /// registry (the job keeps its own copy of them until every outcome is final).
    func sendToActivity(_ request: Request, app: String, activity: String, event: LiveActivityEvent) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        try Self.requireTokenAuth(settings, app: app)
        let id = activity.removingPercentEncodingIfNeeded
        if let problem = LiveActivityRegistration.idProblem(id, "activity") { throw APIError.badRequest("activity", problem) }
        let bytes = try await jsonBody(request)
        let body = try LiveActivityBody.parse(
            bytes, kind: .activity(event), payloadLimit: settings.apns?.payloadLimit, nowSeconds: Int64(now().timeIntervalSince1970))
        let registry = self.registry
        let query = LiveActivityTokenQuery(app: app, kind: .update, activityId: id)
        let tokens = try await registry.run { try $0.allLiveActivityTokens(query) }.map(\.token)
        let response = try await storeActivityJob(app: app, body: body, tokens: tokens, what: "update tokens for activity \(id)")
        if event == .end { _ = try await registry.run { try $0.endActivity(app: app, activityId: id) } }
        return response
    }

    /// 409 `token_auth_required` for an app with certificate credentials: APNs would refuse every notification; 404
    /// `apns_not_configured` for an app without APNs.
    static func requireTokenAuth(_ settings: AppSettings, app: String) throws(APIError) {
        _ = try apns(settings, app: app)
        if let problem = settings.liveActivityProblem { throw APIError(.conflict, "token_auth_required", problem) }
    }

    private func jsonBody(_ request: Request) async throws -> [UInt8] {
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "Live Activity events take application/json")
        }
        return try await readBody(request, limit: limits.notificationBodyBytes)
    }

    private func pushToStartTokens(app: String, type: String, channel: String?, environment: APNsEnvironment?) async throws -> [DeviceToken] {
        let registry = self.registry
        let query = LiveActivityTokenQuery(app: app, kind: .pushToStart, attributesType: type, channel: channel, environment: environment)
        return try await registry.run { try $0.allLiveActivityTokens(query) }.map(\.token)
    }

    /// Stores the event as a job to exactly `tokens` (404 when there are none) and starts it when due.
    private func storeActivityJob(app: String, body: LiveActivityBody, tokens: [DeviceToken], what: String) async throws -> Response {
        // The same request again with its `id` answers for the stored job, even when its tokens are gone from the
        // registry meanwhile (an end removes them).
        let wantedId = body.id
        let (now, known) = try await registry.run { store in
            (try store.clockMs(), try wantedId.map { try store.broadcast(id: $0) != nil } ?? false)
        }
        guard !tokens.isEmpty || known else { throw APIError(.notFound, "no_tokens", "no \(what) are registered for \(app)") }
        var record = BroadcastRecord(
            id: body.id ?? "job-" + NotificationID.random(), app: app, payload: body.prepared.payload, pushType: body.prepared.pushType,
            priority: body.prepared.priority, expiration: body.prepared.expiration, collapseId: body.prepared.collapseId)
        record.scheduledMs = body.atMs
        return try await storeJob(record, tokens: tokens, now: now, extra: [("devices", .int(Int64(tokens.count)))])
    }
}
