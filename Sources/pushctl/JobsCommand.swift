import ArgumentParser
import Foundation
import PushCore
import PushStore

/// `pushctl jobs`: the stored broadcasts and send jobs of an app — scheduled, running, finished — and cancelling.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List, show and cancel broadcasts and send jobs (scheduled ones too).",
        subcommands: [List.self, Show.self, Cancel.self])

    /// The states a user can filter by (`failed` is what old versions wrote for `interrupted`).
    static let states = "pending, running, interrupted, completed, cancelled"

    static func open(_ global: GlobalOptions, app: String) throws -> any RegistryStore {
        let config = try global.loadConfiguration()
        do { _ = try config.app(app) } catch { throw CLIError.usage(error.message) }
        return try RegistryStores.openForCommand(config)
    }

    static func shown(_ state: BroadcastState) -> String { state == .failed ? "interrupted" : state.rawValue }

    static func time(_ ms: Int64?) -> String { ms.map { Timestamp.rfc3339(ms: $0) } ?? "-" }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "Jobs of an app, newest first: id, state, scheduled time, devices, created, finished, and a local-time job's number of waves (folded into it; `jobs show` lists them).")

        @OptionGroup var global: GlobalOptions
        @Option(help: "The app.") var app: String
        @Option(help: "Only jobs in this state (\(JobsCommand.states)).") var state: String?
        @Option(help: "At most N jobs.") var limit = 50
        @Flag(help: "One JSON object per line.") var json = false

        func run() throws {
            var states = BroadcastState.allCases
            if let state {
                guard let s = BroadcastState(rawValue: state), s != .failed else {
                    throw CLIError.usage("--state must be one of \(JobsCommand.states)")
                }
                states = s == .interrupted ? [.interrupted, .failed] : [s]
            }
            guard limit > 0 else { throw CLIError.usage("--limit must be positive") }
            let registry = try JobsCommand.open(global, app: app)
            // A local-time job once, its waves (`id~00`…) folded into it, as the API and the console list it.
            let entries = Array(JobListEntry.fold(try registry.broadcasts(app: app, states: BroadcastState.allCases))
                .filter { states.contains($0.state) }.reversed())
            let shown = entries.prefix(limit)
            if entries.count > limit {
                printError("showing the newest \(limit) of \(entries.count) jobs (--limit \(limit)); --limit \(entries.count) shows all")
            }
            if json {
                for entry in shown { print(JobsCommand.json(entry).encodedString) }
                return
            }
            print(["ID", "STATE", "AT", "DEVICES", "CREATED", "FINISHED", "WAVES"].joined(separator: "\t"))
            for entry in shown {
                switch entry {
                case .job(let r):
                    print([r.id, JobsCommand.shown(r.state), JobsCommand.time(r.scheduledMs), String(r.total),
                           JobsCommand.time(r.createdMs), JobsCommand.time(r.finishedMs), "-"].joined(separator: "\t"))
                case .localTime(let job):
                    let finished = job.waves.allSatisfy { $0.finishedMs != nil } ? job.waves.compactMap(\.finishedMs).max() : nil
                    print([job.id, JobsCommand.shown(job.state), JobsCommand.time(job.waves.compactMap(\.scheduledMs).min()),
                           String(job.waves.map(\.total).reduce(0, +)), JobsCommand.time(entry.createdMs), JobsCommand.time(finished),
                           String(job.waves.count)].joined(separator: "\t"))
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "One job: state, time and committed counts.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "The app.") var app: String
        @Argument(help: "The job (or broadcast) id.") var id: String

        func run() throws {
            let registry = try JobsCommand.open(global, app: app)
            if try registry.broadcast(id: id) == nil, let job = try registry.localTimeJob(id: id, app: app) {
                print(try JobsCommand.json(job, registry: registry).encodedString)
                return
            }
            guard let record = try registry.broadcast(id: id), record.app == app else {
                throw CLIError(code: 1, message: "no job \(id) for \(app)")
            }
            var fields = JobsCommand.json(record).objectPairs ?? []
            let counts = try registry.broadcastCounts(id: id)
            fields += [
                ("done", .int(Int64(counts.done))), ("accepted", .int(Int64(counts.accepted))),
                ("deferred", .int(Int64(counts.deferred))), ("pruned", .int(Int64(counts.pruned))),
                ("notAccepted", .object(counts.notAcceptedByReason.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ]
            print(JSONValue.object(fields).encodedString)
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: "Cancel a job: a scheduled or pending one never starts; a running or interrupted one stops where it is.",
            discussion: """
                Devices without an outcome are not sent to; a process working on it (serve, worker, broadcast) stops \
                at its next lease renewal (within a sixth of shardLeaseSeconds). Exit 0 cancelled (or already \
                cancelled); 1 unknown id or already completed.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The app.") var app: String
        @Argument(help: "The job (or broadcast) id.") var id: String

        func run() throws {
            let registry = try JobsCommand.open(global, app: app)
            if try registry.broadcast(id: id) == nil, let job = try registry.localTimeJob(id: id, app: app) {
                guard job.state != .completed else { throw CLIError(code: 1, message: "job \(id) has completed; there is nothing left to cancel") }
                let after = try registry.cancelLocalTimeJob(id: id, app: app) ?? job
                let sent = try after.waves.map { try registry.broadcastCounts(id: $0.id).done }.reduce(0, +)
                print("job \(id) cancelled (\(after.waves.filter { $0.state == .cancelled }.count) of \(after.waves.count) waves; \(sent) devices had an outcome)")
                return
            }
            guard let record = try registry.cancelBroadcast(id: id, app: app) else {
                throw CLIError(code: 1, message: "no job \(id) for \(app)")
            }
            guard record.state == .cancelled else {
                throw CLIError(code: 1, message: "job \(id) has completed; there is nothing left to cancel")
            }
            let counts = try registry.broadcastCounts(id: id)
            print("job \(id) cancelled (\(counts.done) of \(record.total) devices had an outcome)")
        }
    }

    /// A local-time job: its state over the waves, and each wave's time, offset, state and counts.
    static func json(_ job: LocalTimeJob, registry: any RegistryStore) throws -> JSONValue {
        var waves: [JSONValue] = []
        var done = 0, accepted = 0
        for wave in job.waves {
            let counts = try registry.broadcastCounts(id: wave.id)
            done += counts.done
            accepted += counts.accepted
            let info = wave.targeting?.wave
            waves.append(.object([
                ("index", .int(Int64(info?.index ?? 0))), ("at", .string(time(wave.scheduledMs))),
                ("utcOffset", .string(LocalTimePlan.Wave.label(offsetSeconds: info?.utcOffsetSeconds ?? 0))),
                ("zones", .int(Int64(info?.zones.count ?? 0))), ("state", .string(shown(wave.state))),
                ("total", .int(Int64(wave.total))), ("done", .int(Int64(counts.done))), ("accepted", .int(Int64(counts.accepted))),
            ]))
        }
        return .object([
            ("id", .string(job.id)), ("app", .string(job.app)), ("state", .string(shown(job.state))),
            ("localTime", .string(job.localTime)), ("done", .int(Int64(done))), ("accepted", .int(Int64(accepted))),
            ("waves", .array(waves)),
        ])
    }

    /// One entry of `jobs list --json`: a job, or a local-time job with its number of waves (`jobs show` lists them).
    static func json(_ entry: JobListEntry) -> JSONValue {
        switch entry {
        case .job(let r): return json(r)
        case .localTime(let job):
            var fields: [(String, JSONValue)] = [
                ("id", .string(job.id)), ("app", .string(job.app)), ("state", .string(shown(job.state))),
                ("total", .int(Int64(job.waves.map(\.total).reduce(0, +)))), ("created", .string(time(entry.createdMs))),
            ]
            if let at = job.waves.compactMap(\.scheduledMs).min() { fields.append(("at", .string(time(at)))) }
            fields.append(("localTime", .string(job.localTime)))
            fields.append(("waves", .int(Int64(job.waves.count))))
            return .object(fields)
        }
    }

    static func json(_ r: BroadcastRecord) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .string(r.id)), ("app", .string(r.app)), ("state", .string(shown(r.state))),
            ("total", .int(Int64(r.total))), ("created", .string(time(r.createdMs))),
        ]
        if let at = r.scheduledMs { fields.append(("at", .string(time(at)))) }
        if let finished = r.finishedMs { fields.append(("finished", .string(time(finished)))) }
        if let channel = r.channel { fields.append(("channel", .string(channel))) }
        if let error = r.error { fields.append(("error", .string(error))) }
        return .object(fields)
    }
}
