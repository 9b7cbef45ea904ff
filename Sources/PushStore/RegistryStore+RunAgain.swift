import PushCore

/// What a request names when it gives a job id: an ordinary job or a local-time job, as ``RunAgain`` compares them.
public enum WantedJob: Sendable {
    /// A job of one record (`explicitTokens` set as it will be stored).
    case job(BroadcastRecord)
    /// A local-time job (its planned waves).
    case localTime(LocalTimeJob)
}

/// The job stored under an id.
public enum JobUnderId: Sendable {
    case job(BroadcastRecord)
    case localTime(LocalTimeJob)
}

extension RegistryStore {
    /// The job stored under `id` (an ordinary job, or the waves `id~00`… of `app`'s local-time job `id`) described
    /// for ``RunAgain/decide(id:found:request:)``, compared with `wanted`; nil when the id is free. `deferred` is
    /// read for a completed ordinary job; whether other processes hold it is the caller's to add.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func runAgainFound(id: String, app: String, wanted: WantedJob, nowMs: Int64) throws(StoreError) -> (found: RunAgain.Found, stored: JobUnderId)? {
        if let existing = try broadcast(id: id) {
            let same: Bool
            switch wanted {
            case .job(let record): same = existing.describesSameJob(as: record)
            case .localTime: same = false
            }
            let deferred = existing.state == .completed ? try broadcastCounts(id: id).deferred : 0
            let found = RunAgain.Found(state: existing.state, sameJob: same, waiting: existing.isWaiting(atMs: nowMs), deferred: deferred)
            return (found, .job(existing))
        }
        guard let job = try localTimeJob(id: id, app: app) else { return nil }
        let same: Bool
        switch wanted {
        case .job: same = false
        case .localTime(let planned): same = job.describesSameJob(as: planned)
        }
        return (RunAgain.Found.localTime(waveStates: job.waves.map(\.state), sameJob: same), .localTime(job))
    }
}
