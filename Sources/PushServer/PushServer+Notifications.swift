import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addNotificationRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/notifications") { request, context in
            try await self.createJob(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/notifications") { request, context in
            try await self.listJobs(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/notifications/:id") { request, context in
            try await self.jobStatus(
                request, app: try context.parameters.require("app"), id: try context.parameters.require("id"))
        }
        router.delete("/v1/apps/:app/notifications/:id") { request, context in
            try await self.cancelJob(
                request, app: try context.parameters.require("app"), id: try context.parameters.require("id"))
        }
    }

    /// `POST /v1/apps/{app}/notifications` → 202 `{"id"}`. The job is stored before the answer, so it is
    /// finished even if the server restarts; an `id` the client chose makes the request idempotent. With
    /// `"at"` it waits, stored, until that time (on the store's clock).
    func createJob(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "send jobs take application/json")
        }
        let body = try NotificationBody.parse(try await readBody(request, limit: limits.notificationBodyBytes),
                                              payloadLimit: settings.apns?.payloadLimit)
        var channel: String?
        var tokens: [DeviceToken]?
        var audience: Audience?
        switch body.target {
        case .channel(let name): channel = name
        case .tokens(let list): tokens = list
        case .all: break
        case .audience(let a): audience = a
        }
        let now = try await registry.run { try $0.clockMs() }
        let id = body.id ?? "job-" + NotificationID.random()
        var record = BroadcastRecord(
            id: id, app: app, payload: body.prepared.payload, pushType: body.prepared.pushType,
            priority: body.prepared.priority, expiration: body.prepared.expiration,
            collapseId: body.prepared.collapseId, channel: channel, environment: body.environment)
        record.scheduledMs = body.atMs
        let targeting = JobTargeting(audience: audience, variants: body.variants)
        record.targeting = targeting.isEmpty ? nil : targeting
        if let channel, let problem = ChannelNames.problem(channel) { throw APIError.badRequest("channel", problem) }
        if let spec = body.localTime {
            return try await storeLocalTimeJob(record, spec: spec, defaultZone: settings.effectiveDefaultTimeZone, now: now)
        }
        return try await storeJob(record, tokens: tokens, now: now)
    }

    /// Stores a new job and starts it when due, or, for an id already stored, answers for that job as ``RunAgain``
    /// decides: the same request again resumes an interrupted job or retries a completed one's deferred devices; a
    /// cancelled id (an ordinary or a local-time job) or a different job under it is a 409 with a JSON body.
    /// 202 `{"id","state"[,"at"]}`.
    func storeJob(_ record: BroadcastRecord, tokens: [DeviceToken]?, now: Int64, extra: [(String, JSONValue)] = []) async throws -> Response {
        let id = record.id, app = record.app
        let wanted = { var r = record; r.explicitTokens = tokens != nil; return r }()
        // One hop to the store: the id is looked up and the job stored (in one transaction) together.
        let stored = try await registry.run { (store) throws -> StoredJob in
            let found = try store.runAgainFound(id: id, app: app, wanted: .job(wanted), nowMs: now)
            let decision = RunAgain.decide(id: id, found: found?.found, request: .run)
            if decision == .create { try store.createBroadcast(record, tokens: tokens) }
            var existing: BroadcastRecord?
            if case .job(let r)? = found?.stored { existing = r }
            return StoredJob(decision: decision, existing: existing)
        }
        switch stored.decision {
        case .refuse(let refusal):
            throw APIError(HTTPResponse.Status(code: refusal.httpStatus), refusal.code, refusal.message)
        case .create:
            // A job in the future is started by the runner's schedule check when its time comes.
            if record.isDue(atMs: now) { jobs.enqueue(id, app: app) }
            return JSONResponse.make(.accepted, .object(Self.acceptedFields(record) + extra))
        case .wait, .done, .retryDeferred, .join, .resume:
            let existing = stored.existing ?? record
            if stored.decision.runs {
                var retry = false
                if case .retryDeferred = stored.decision { retry = true }
                jobs.enqueue(id, app: app, retryDeferred: retry)
            }
            return JSONResponse.make(.accepted, .object(Self.acceptedFields(existing) + extra))
        }
    }

    static func acceptedFields(_ record: BroadcastRecord) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("id", .string(record.id)), ("state", .string(record.state.rawValue))]
        if let at = record.scheduledMs { fields.append(("at", .string(Timestamp.rfc3339(ms: at)))) }
        return fields
    }

    /// `GET /v1/apps/{app}/notifications/{id}` → state and counts. A cancelled job was deleted: 404, with a
    /// message that says so (the job list and `pushctl jobs show` still have it).
    func jobStatus(_ request: Request, app: String, id: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let found = try await registry.run { (store) throws -> FoundJob? in
            guard let record = try store.broadcast(id: id) else {
                return try store.localTimeJob(id: id, app: app).map { .localTime(try LocalTimeStatus.read($0, from: store)) }
            }
            guard record.app == app else { return nil }
            return .job(record, try store.broadcastCounts(id: id))
        }
        if case .localTime(let status)? = found {
            // A cancelled local-time job answers as a cancelled job does (the job list and `jobs show` keep it).
            if status.job.state == .cancelled {
                let done = status.counts.values.reduce(0) { $0 + $1.done }
                throw APIError(.notFound, "job_cancelled", "local-time job \(id) was cancelled; \(done) devices had an outcome")
            }
            return JSONResponse.make(.ok, .object(status.fields))
        }
        guard case .job(let record, let counts)? = found else { throw APIError(.notFound, "unknown_job", "no send job \(id) for \(app)") }
        if record.state == .cancelled {
            let done = counts.done
            let when = record.finishedMs.map { " at \(Timestamp.rfc3339(ms: $0))" } ?? ""
            throw APIError(.notFound, "job_cancelled", "send job \(id) was cancelled\(when); \(done) devices had an outcome")
        }
        return JSONResponse.make(.ok, .object(Self.statusFields(record, counts: counts)))
    }

    /// `DELETE /v1/apps/{app}/notifications/{id}` → 200 with the cancelled job's state and counts. A scheduled or
    /// pending job never starts; a running or interrupted one stops where it is (devices without an outcome are
    /// not sent to). Cancelling a cancelled job again answers the same; a completed one is 409.
    func cancelJob(_ request: Request, app: String, id: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let found = try await registry.run { (store) throws -> FoundJob? in
            if try store.broadcast(id: id) == nil, let job = try store.localTimeJob(id: id, app: app) {
                // A completed job is answered as it is (409 below); any other has its unfinished waves cancelled.
                let after = job.state == .completed ? job : try store.cancelLocalTimeJob(id: id, app: app) ?? job
                return .localTime(try LocalTimeStatus.read(after, from: store))
            }
            guard let record = try store.cancelBroadcast(id: id, app: app) else { return nil }
            return .job(record, try store.broadcastCounts(id: id))
        }
        if case .localTime(let status)? = found {
            if status.job.state == .completed {
                throw APIError(.conflict, "job_completed", "job \(id) has completed; there is nothing left to cancel")
            }
            for wave in status.job.waves { jobs.cancel(wave.id) }
            return JSONResponse.make(.ok, .object(status.fields))
        }
        guard case .job(let record, let counts)? = found else { throw APIError(.notFound, "unknown_job", "no send job \(id) for \(app)") }
        if record.state == .completed {
            throw APIError(.conflict, "job_completed", "job \(id) has completed; there is nothing left to cancel")
        }
        jobs.cancel(id)
        return JSONResponse.make(.ok, .object(Self.statusFields(record, counts: counts)))
    }

    /// `GET /v1/apps/{app}/notifications[?state=S&limit=N]` → `{"jobs": […]}`, newest first: each job's id,
    /// state, time, total and when it was created and finished (counts: `GET` the job).
    func listJobs(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        var states = BroadcastState.allCases.filter { $0 != .failed }
        if let text = request.uri.queryParameters.get("state") {
            guard let state = BroadcastState(rawValue: text), state != .failed else {
                throw APIError.badRequest("state", "state must be one of pending, running, interrupted, completed, cancelled")
            }
            states = [state]
            if state == .interrupted { states.append(.failed) }
        }
        let limit = try QueryLimit.parse(request, default: 50, maximum: 500)
        // Every state is read: a local-time job's state is its waves' together, so its waves are folded first.
        let records = try await registry.run { try $0.broadcasts(app: app, states: BroadcastState.allCases) }
        let items: [JSONValue] = Self.jobSummaries(records, states: states).reversed().prefix(limit).map { .object($0) }
        return JSONResponse.make(.ok, .object([("jobs", .array(items))]))
    }

    static func summaryFields(_ record: BroadcastRecord) -> [(String, JSONValue)] {
        // Versions before 2026-11 wrote `failed` for what is now `interrupted`.
        let state = record.state == .failed ? BroadcastState.interrupted : record.state
        var fields: [(String, JSONValue)] = [
            ("id", .string(record.id)), ("state", .string(state.rawValue)), ("total", .int(Int64(record.total))),
            ("createdMs", .int(record.createdMs)),
        ]
        if let at = record.scheduledMs { fields.append(("at", .string(Timestamp.rfc3339(ms: at)))) }
        if let finished = record.finishedMs { fields.append(("finishedMs", .int(finished))) }
        if let error = record.error { fields.append(("error", .string(error))) }
        return fields
    }

    static func statusFields(_ record: BroadcastRecord, counts: BroadcastCounts) -> [(String, JSONValue)] {
        let state = record.state == .failed ? BroadcastState.interrupted : record.state
        var fields: [(String, JSONValue)] = [
            ("id", .string(record.id)), ("state", .string(state.rawValue)), ("total", .int(Int64(record.total))),
            ("done", .int(Int64(counts.done))), ("accepted", .int(Int64(counts.accepted))),
            ("deferred", .int(Int64(counts.deferred))),
            ("notAccepted", .object(counts.notAcceptedByReason.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ("pruned", .int(Int64(counts.pruned))), ("retried", .int(Int64(counts.retried))),
            ("possiblyDuplicated", .int(Int64(counts.possiblyDuplicated))), ("createdMs", .int(record.createdMs)),
        ]
        if let at = record.scheduledMs { fields.append(("at", .string(Timestamp.rfc3339(ms: at)))) }
        if let finished = record.finishedMs { fields.append(("finishedMs", .int(finished))) }
        if let error = record.error { fields.append(("error", .string(error))) }
        return fields
    }
}

/// What looking up (or cancelling) a job found: a job and its counts, or a local-time job and its waves'.
enum FoundJob: Sendable {
    case job(BroadcastRecord, BroadcastCounts)
    case localTime(LocalTimeStatus)
}

/// What storing a job found (``PushServer/storeJob(_:tokens:now:extra:)``): the run-again decision and the job
/// stored under the id.
struct StoredJob: Sendable {
    var decision: RunAgain.Decision
    var existing: BroadcastRecord?
}
