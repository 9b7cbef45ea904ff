import Hummingbird
import PushCore
import PushStore

extension PushServer {
    /// Stores a local-time job (``LocalTimeJob``: one scheduled wave per UTC offset, in one transaction) and starts
    /// the waves already due; 202 `{"id","state","waves"}`. The same request again answers for the stored job; a
    /// cancelled id or a different job under it is 409 (``RunAgain``).
    func storeLocalTimeJob(_ base: BroadcastRecord, spec: LocalTimeSpec, defaultZone: String, now: Int64) async throws -> Response {
        let job = LocalTimeJob.plan(base, spec: spec, defaultZone: defaultZone, now: now)
        guard !job.waves.isEmpty else {
            // Every zone's time has passed and skipPast drops them all: nothing to send, nothing stored.
            return JSONResponse.make(.accepted, .object([
                ("id", .string(base.id)), ("state", .string(BroadcastState.completed.rawValue)), ("localTime", .string(spec.description)),
                ("waves", .int(0)),
            ]))
        }
        let outcome = try await registry.run { (store) throws -> LocalTimeStore in
            let found = try store.runAgainFound(id: base.id, app: base.app, wanted: .localTime(job), nowMs: now)
            let decision = RunAgain.decide(id: base.id, found: found?.found, request: .run)
            if case .refuse(let refusal) = decision { return .refused(refusal) }
            return .stored(try store.storeLocalTimeJob(job).job)
        }
        let stored: LocalTimeJob
        switch outcome {
        case .refused(let refusal): throw APIError(HTTPResponse.Status(code: refusal.httpStatus), refusal.code, refusal.message)
        case .stored(let job): stored = job
        }
        for wave in stored.waves where wave.state == .pending && wave.isDue(atMs: now) { jobs.enqueue(wave.id, app: base.app) }
        return JSONResponse.make(.accepted, .object([
            ("id", .string(stored.id)), ("state", .string(stored.state.rawValue)), ("localTime", .string(stored.localTime)),
            ("waves", .int(Int64(stored.waves.count))),
        ]))
    }

    /// The job list's items, oldest first: a local-time job once (its waves folded into it), the others as before;
    /// only those in `states`.
    static func jobSummaries(_ records: [BroadcastRecord], states: [BroadcastState]) -> [[(String, JSONValue)]] {
        JobListEntry.fold(records).filter { states.contains($0.state) }.map { entry in
            switch entry {
            case .job(let record): return summaryFields(record)
            case .localTime(let job):
                let waves = job.waves
                var fields: [(String, JSONValue)] = [
                    ("id", .string(job.id)), ("state", .string(job.state.rawValue)), ("total", .int(Int64(waves.map(\.total).reduce(0, +)))),
                    ("createdMs", .int(entry.createdMs)), ("localTime", .string(job.localTime)), ("waves", .int(Int64(waves.count))),
                ]
                if let at = waves.compactMap(\.scheduledMs).min() { fields.append(("at", .string(Timestamp.rfc3339(ms: at)))) }
                return fields
            }
        }
    }
}

/// What storing a local-time job did.
enum LocalTimeStore: Sendable {
    case refused(RunAgain.Refusal)
    case stored(LocalTimeJob)
}
