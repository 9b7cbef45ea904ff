import Foundation
import PushCore
import PushStore

/// `--at TIME` on `send` and `broadcast`: the job is stored now and started at TIME by `pushctl serve` or
/// `pushctl worker` (on the store's clock).
enum ScheduleOption {
    /// The time in ms since 1970, or a usage error naming the option.
    static func parse(_ text: String, now: Int64) throws -> Int64 {
        let at: Int64
        do { at = try Timestamp.parse(text) } catch { throw CLIError.usage("--at: \(error.message)") }
        return at
    }

    /// Stores `record` (scheduled) unless the same job is already stored under its id, then prints the id on
    /// standard output and when it runs on standard error. A cancelled id (ordinary or local-time) exits 1, another
    /// job under the id 2 (``RunAgain``).
    static func store(_ record: BroadcastRecord, tokens: [DeviceToken]?, in registry: any RegistryStore, now: Int64) throws {
        var wanted = record
        wanted.explicitTokens = tokens != nil
        let lookup = try cli { () throws(StoreError) in
            try registry.runAgainFound(id: record.id, app: record.app, wanted: .job(wanted), nowMs: now)
        }
        switch RunAgain.decide(id: record.id, found: lookup?.found, request: .store) {
        case .refuse(let refusal):
            throw CLIError(code: refusal.exitCode, message: refusal.message)
        case .create:
            break
        default:
            printError("job \(record.id) is already stored (\(lookup?.found.state.rawValue ?? "stored"))")
            print(record.id)
            return
        }
        try registry.createBroadcast(record, tokens: tokens)
        let at = record.scheduledMs ?? now
        let when = at <= now ? "now (its time has passed)" : "at \(Timestamp.rfc3339(ms: at))"
        printError("job \(record.id) scheduled: `pushctl serve` or `pushctl worker` starts it \(when); `pushctl jobs cancel \(record.id) --app \(record.app)` cancels it")
        print(record.id)
    }

    /// Stores a local-time job (one wave per UTC offset, in one transaction) unless the same one is stored, then
    /// prints its id and its waves. A cancelled id exits 1, another job under it 2 (``RunAgain``).
    static func storeLocalTime(
        _ base: BroadcastRecord, spec: LocalTimeSpec, defaultZone: String, in registry: any RegistryStore, now: Int64
    ) throws {
        let job = LocalTimeJob.plan(base, spec: spec, defaultZone: defaultZone, now: now)
        guard !job.waves.isEmpty else { throw CLIError.usage("--skip-past drops every wave: their times have all passed") }
        let lookup = try cli { () throws(StoreError) in
            try registry.runAgainFound(id: base.id, app: base.app, wanted: .localTime(job), nowMs: now)
        }
        if case .refuse(let refusal) = RunAgain.decide(id: base.id, found: lookup?.found, request: .store) {
            throw CLIError(code: refusal.exitCode, message: refusal.message)
        }
        let result: (job: LocalTimeJob, created: Bool)
        do { result = try registry.storeLocalTimeJob(job) } catch {
            if error.code == .constraint { throw CLIError.usage(error.message) }
            throw error
        }
        if !result.created {
            printError("job \(base.id) is already stored (\(result.job.state.rawValue))")
        } else {
            let first = result.job.waves.first?.scheduledMs ?? now
            let last = result.job.waves.last?.scheduledMs ?? now
            printError("job \(base.id) scheduled at \(spec.description) local time: \(result.job.waves.count) waves from \(Timestamp.rfc3339(ms: first)) to \(Timestamp.rfc3339(ms: last)), started by `pushctl serve` or `pushctl worker`; `pushctl jobs show \(base.id) --app \(base.app)` shows them")
        }
        print(base.id)
    }
}
