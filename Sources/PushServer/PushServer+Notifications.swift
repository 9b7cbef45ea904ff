import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addNotificationRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/notifications") { request, context in
            try await self.createJob(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/notifications/:id") { request, context in
            try await self.jobStatus(
                request, app: try context.parameters.require("app"), id: try context.parameters.require("id"))
        }
    }

    /// `POST /v1/apps/{app}/notifications` → 202 `{"id"}`. The job is stored before the answer, so it is
    /// finished even if the server restarts; an `id` the client chose makes the request idempotent.
    func createJob(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "send jobs take application/json")
        }
        let body = try NotificationBody.parse(try await readBody(request, limit: limits.notificationBodyBytes),
                                              payloadLimit: settings.payloadLimit)
        var channel: String?
        var tokens: [DeviceToken]?
        switch body.target {
        case .channel(let name): channel = name
        case .tokens(let list): tokens = list
        case .all: break
        }
        let id = body.id ?? "job-" + APNsID.random()
        let record = BroadcastRecord(
            id: id, app: app, payload: body.prepared.payload, pushType: body.prepared.pushType,
            priority: body.prepared.priority, expiration: body.prepared.expiration,
            collapseId: body.prepared.collapseId, channel: channel, environment: body.environment)
        if let existing = try registry.broadcast(id: id) {
            var wanted = record
            wanted.explicitTokens = tokens != nil
            guard existing.describesSameJob(as: wanted) else {
                throw APIError(.conflict, "id_conflict", "job \(id) exists with a different app, payload or target")
            }
            // The same request again resumes an interrupted job, or retries a completed job's deferred devices.
            let deferred = existing.state == .completed ? try registry.broadcastCounts(id: id).deferred : 0
            if existing.state.isUnfinished || deferred > 0 { jobs.enqueue(id, app: app, retryDeferred: deferred > 0) }
            return JSONResponse.make(.accepted, .object([("id", .string(id)), ("state", .string(existing.state.rawValue))]))
        }
        if let channel, let problem = Registry.channelNameProblem(channel) { throw APIError.badRequest("channel", problem) }
        try registry.createBroadcast(record, tokens: tokens)
        jobs.enqueue(id, app: app)
        return JSONResponse.make(.accepted, .object([("id", .string(id)), ("state", .string("pending"))]))
    }

    /// `GET /v1/apps/{app}/notifications/{id}` → state and counts.
    func jobStatus(_ request: Request, app: String, id: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        guard let record = try registry.broadcast(id: id), record.app == app else {
            throw APIError(.notFound, "unknown_job", "no send job \(id) for \(app)")
        }
        let counts = try registry.broadcastCounts(id: id)
        var fields: [(String, JSONValue)] = [
            ("id", .string(id)), ("state", .string(record.state.rawValue)), ("total", .int(Int64(record.total))),
            ("done", .int(Int64(counts.done))), ("accepted", .int(Int64(counts.accepted))),
            ("deferred", .int(Int64(counts.deferred))),
            ("notAccepted", .object(counts.notAcceptedByReason.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ("pruned", .int(Int64(counts.pruned))), ("retried", .int(Int64(counts.retried))),
            ("possiblyDuplicated", .int(Int64(counts.possiblyDuplicated))), ("createdMs", .int(record.createdMs)),
        ]
        if let finished = record.finishedMs { fields.append(("finishedMs", .int(finished))) }
        if let error = record.error { fields.append(("error", .string(error))) }
        return JSONResponse.make(.ok, .object(fields))
    }
}
