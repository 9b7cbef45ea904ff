import PushCore
import PushStore

/// A local-time job as `GET`/`DELETE …/notifications/{id}` answer it: its state and counts over its waves, and each
/// wave's own. Read in the same store call that found the job (``read(_:from:)``), then rendered without the store.
struct LocalTimeStatus: Sendable {
    /// The job (its waves).
    let job: LocalTimeJob
    /// Each wave's counters, by wave id.
    let counts: [String: BroadcastCounts]

    /// The job's waves' counters, read from `store` (on the store executor).
    @available(*, noasync, message: "blocks on the database: call it inside run { }")
    static func read(_ job: LocalTimeJob, from store: any RegistryStore) throws(StoreError) -> LocalTimeStatus {
        var counts: [String: BroadcastCounts] = [:]
        for wave in job.waves { counts[wave.id] = try store.broadcastCounts(id: wave.id) }
        return LocalTimeStatus(job: job, counts: counts)
    }

    /// `{"id","state","localTime","total","done","accepted","deferred","pruned","waves":[{"index","at","utcOffset",
    /// "zones","state","total","done","accepted","deferred"}]}`: a wave not yet started counts no devices in `total`.
    var fields: [(String, JSONValue)] {
        var total = 0, done = 0, accepted = 0, deferred = 0, pruned = 0
        var waves: [JSONValue] = []
        for wave in job.waves {
            let counts = self.counts[wave.id] ?? BroadcastCounts()
            let info = wave.targeting?.wave
            total += wave.state == .pending ? 0 : wave.total
            done += counts.done
            accepted += counts.accepted
            deferred += counts.deferred
            pruned += counts.pruned
            waves.append(.object([
                ("index", .int(Int64(info?.index ?? 0))),
                ("at", .string(Timestamp.rfc3339(ms: wave.scheduledMs ?? wave.createdMs))),
                ("utcOffset", .string(LocalTimePlan.Wave.label(offsetSeconds: info?.utcOffsetSeconds ?? 0))),
                ("zones", .int(Int64(info?.zones.count ?? 0))),
                ("state", .string((wave.state == .failed ? BroadcastState.interrupted : wave.state).rawValue)),
                ("total", .int(Int64(wave.total))), ("done", .int(Int64(counts.done))), ("accepted", .int(Int64(counts.accepted))),
                ("deferred", .int(Int64(counts.deferred))),
            ]))
        }
        return [
            ("id", .string(job.id)), ("state", .string(job.state.rawValue)), ("localTime", .string(job.localTime)),
            ("total", .int(Int64(total))), ("done", .int(Int64(done))), ("accepted", .int(Int64(accepted))),
            ("deferred", .int(Int64(deferred))), ("pruned", .int(Int64(pruned))), ("waves", .array(waves)),
        ]
    }
}
