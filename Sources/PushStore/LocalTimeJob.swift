import PushCore

/// A local-time job: one id, stored as one scheduled job per wave (``LocalTimePlan``) named `ID~NN`, each started
/// by `pushctl serve` or `pushctl worker` when the store's clock reaches its time and sent by the broadcast engine
/// like any job (sharded, resumable, worker-claimable). A wave takes the devices whose zone at the job's reference
/// instant (its first wave's time) is one of its zones (``LocalTimeWave``), so every device is in exactly one wave
/// without any write per device. The waves are stored in one transaction: nothing is stored half-way.
public struct LocalTimeJob: Sendable, Equatable {
    /// The job's id.
    public var id: String
    /// The app.
    public var app: String
    /// Its waves in time order.
    public var waves: [BroadcastRecord]

    /// A job of these waves.
    public init(id: String, app: String, waves: [BroadcastRecord]) {
        self.id = id
        self.app = app
        self.waves = waves
    }

    /// The id of wave `index` of job `id` (`~` cannot appear in ids people choose).
    public static func waveId(_ id: String, _ index: Int) -> String {
        index < 10 ? "\(id)~0\(index)" : "\(id)~\(index)"
    }

    /// The job's state over its waves (``BroadcastState/aggregate(_:)``).
    public var state: BroadcastState { BroadcastState.aggregate(waves.map(\.state)) }

    /// What was asked (`09:00 on 2026-12-24`).
    public var localTime: String { waves.first?.targeting?.wave?.localTime ?? "" }

    /// The waves for `base` (the job as if it were sent now: payload, target, audience, variants) at `spec`'s local
    /// time, planned at `now` on the store's clock. Devices without a zone are in `defaultZone`'s wave.
    public static func plan(
        _ base: BroadcastRecord, spec: LocalTimeSpec, defaultZone: String, now: Int64, zones: [String]? = nil
    ) -> LocalTimeJob {
        let planned = LocalTimePlan.waves(
            spec, createdMs: now, defaultZone: defaultZone, zones: zones ?? SystemTimeZones.names.allNames.sorted())
        let reference = planned.map(\.atMs).min() ?? now
        let waves = planned.enumerated().map { index, wave -> BroadcastRecord in
            var record = base
            record.id = waveId(base.id, index)
            // Every wave carries the job's collapse id, as one job would.
            record.collapseId = base.effectiveCollapseId
            record.scheduledMs = wave.atMs
            var targeting = base.targeting ?? JobTargeting()
            targeting.wave = LocalTimeWave(
                job: base.id, index: index, zones: wave.zones, includesUnzoned: wave.includesUnzoned, referenceMs: reference,
                localTime: spec.description, utcOffsetSeconds: wave.utcOffsetSeconds)
            record.targeting = targeting
            return record
        }
        return LocalTimeJob(id: base.id, app: base.app, waves: waves)
    }

    /// True when `other` asks for the same notification to the same audience at the same local time (the same
    /// request again; the waves' times may differ when planned again later).
    public func describesSameJob(as other: LocalTimeJob) -> Bool {
        guard var a = waves.first, var b = other.waves.first else { return false }
        guard a.targeting?.wave?.localTime == b.targeting?.wave?.localTime else { return false }
        a.scheduledMs = nil
        b.scheduledMs = nil
        a.id = ""
        b.id = ""
        a.targeting?.wave = nil
        b.targeting?.wave = nil
        return a.describesSameJob(as: b)
    }
}

extension RegistryStore {
    /// The local-time job `id` of `app` (its waves), or nil.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func localTimeJob(id: String, app: String) throws(StoreError) -> LocalTimeJob? {
        let waves = try broadcasts(app: app, states: BroadcastState.allCases).filter { $0.targeting?.wave?.job == id }
            .sorted { ($0.targeting?.wave?.index ?? 0) < ($1.targeting?.wave?.index ?? 0) }
        return waves.isEmpty ? nil : LocalTimeJob(id: id, app: app, waves: waves)
    }

    /// Stores `job`'s waves in one transaction, or finds it stored: the same job again is not stored twice (nil
    /// error, `created` false); another job under the same id is `.constraint`.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func storeLocalTimeJob(_ job: LocalTimeJob) throws(StoreError) -> (job: LocalTimeJob, created: Bool) {
        if try broadcast(id: job.id) != nil {
            throw StoreError(.constraint, "job \(job.id) exists and is not a local-time job; use another id")
        }
        if let existing = try localTimeJob(id: job.id, app: job.app) {
            guard existing.describesSameJob(as: job) else {
                throw StoreError(.constraint, "job \(job.id) exists with a different app, payload, target or local time; use another id")
            }
            return (existing, false)
        }
        try createBroadcasts(job.waves)
        return (job, true)
    }

    /// Cancels every wave of a local-time job that has not completed; returns the job after, or nil when unknown.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func cancelLocalTimeJob(id: String, app: String) throws(StoreError) -> LocalTimeJob? {
        guard let job = try localTimeJob(id: id, app: app) else { return nil }
        for wave in job.waves where wave.state != .completed && wave.state != .cancelled {
            _ = try cancelBroadcast(id: wave.id, app: app)
        }
        return try localTimeJob(id: id, app: app)
    }
}

/// One entry of a job list: an ordinary job, or a local-time job with its waves folded into it.
public enum JobListEntry: Sendable {
    case job(BroadcastRecord)
    case localTime(LocalTimeJob)

    /// When it was created (a local-time job: its first wave).
    public var createdMs: Int64 {
        switch self {
        case .job(let r): return r.createdMs
        case .localTime(let j): return j.waves.map(\.createdMs).min() ?? 0
        }
    }

    /// Its state (a local-time job: over its waves).
    public var state: BroadcastState {
        switch self {
        case .job(let r): return r.state
        case .localTime(let j): return j.state
        }
    }

    /// `records` as the job list shows them, oldest first: each local-time job once, its waves folded into it (the
    /// API's list, the console and `pushctl jobs list` alike).
    public static func fold(_ records: [BroadcastRecord]) -> [JobListEntry] {
        var out: [JobListEntry] = []
        var groups: [String: [BroadcastRecord]] = [:]
        var order: [String] = []
        for record in records {
            if let job = record.targeting?.wave?.job {
                if groups[job] == nil { order.append(job) }
                groups[job, default: []].append(record)
            } else {
                out.append(.job(record))
            }
        }
        for id in order {
            guard let waves = groups[id], let first = waves.first else { continue }
            let sorted = waves.sorted { ($0.targeting?.wave?.index ?? 0) < ($1.targeting?.wave?.index ?? 0) }
            out.append(.localTime(LocalTimeJob(id: id, app: first.app, waves: sorted)))
        }
        return out.enumerated().sorted { ($0.element.createdMs, $0.offset) < ($1.element.createdMs, $1.offset) }.map(\.element)
    }
}
