import Hummingbird
import PushCore
import PushStore

extension PushServer {
    /// Stores a local-time job (``LocalTimeJob``: one scheduled wave per UTC offset, in one transaction) and starts
    /// the waves already due; 202 `{"id","state","waves"}`. The same request again answers for the stored job; a
    /// different one under the same id is 409.
    func storeLocalTimeJob(_ base: BroadcastRecord, spec: LocalTimeSpec, defaultZone: String, now: Int64) async throws -> Response {
        let job = LocalTimeJob.plan(base, spec: spec, defaultZone: defaultZone, now: now)
        guard !job.waves.isEmpty else {
            // Every zone's time has passed and skipPast drops them all: nothing to send, nothing stored.
            return JSONResponse.make(.accepted, .object([
                ("id", .string(base.id)), ("state", .string(BroadcastState.completed.rawValue)), ("localTime", .string(spec.description)),
                ("waves", .int(0)),
            ]))
        }
        let stored: LocalTimeJob
        do { stored = try await registry.run { try $0.storeLocalTimeJob(job).job } } catch {
            if error.code == .constraint { throw APIError(.conflict, "id_conflict", error.message) }
            throw error
        }
        if stored.state == .cancelled { throw APIError(.conflict, "job_cancelled", "job \(base.id) was cancelled; send it with another id") }
        for wave in stored.waves where wave.state == .pending && wave.isDue(atMs: now) { jobs.enqueue(wave.id, app: base.app) }
        return JSONResponse.make(.accepted, .object([
            ("id", .string(stored.id)), ("state", .string(stored.state.rawValue)), ("localTime", .string(stored.localTime)),
            ("waves", .int(Int64(stored.waves.count))),
        ]))
    }

    /// The job list's items, oldest first: a local-time job once (its waves folded into it), the others as before;
    /// only those in `states`.
    static func jobSummaries(_ records: [BroadcastRecord], states: [BroadcastState]) -> [[(String, JSONValue)]] {
        var out: [[(String, JSONValue)]] = []
        var groups: [String: [BroadcastRecord]] = [:]
        var order: [String] = []
        for record in records {
            if let job = record.targeting?.wave?.job {
                if groups[job] == nil { order.append(job) }
                groups[job, default: []].append(record)
                continue
            }
            if states.contains(record.state) { out.append(summaryFields(record)) }
        }
        for id in order {
            guard let waves = groups[id], let first = waves.first else { continue }
            let job = LocalTimeJob(id: id, app: first.app, waves: waves)
            guard states.contains(job.state) else { continue }
            var fields: [(String, JSONValue)] = [
                ("id", .string(id)), ("state", .string(job.state.rawValue)), ("total", .int(Int64(waves.map(\.total).reduce(0, +)))),
                ("createdMs", .int(first.createdMs)), ("localTime", .string(job.localTime)), ("waves", .int(Int64(waves.count))),
            ]
            if let at = waves.compactMap(\.scheduledMs).min() { fields.append(("at", .string(Timestamp.rfc3339(ms: at)))) }
            out.append(fields)
        }
        func created(_ fields: [(String, JSONValue)]) -> Int64 { fields.first(where: { $0.0 == "createdMs" })?.1.intValue ?? 0 }
        return out.sorted { created($0) < created($1) }
    }
}
