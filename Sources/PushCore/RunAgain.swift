/// "Run this id again?": the one decision table for a request that names a job id (`pushctl broadcast --id`,
/// `pushctl send|broadcast --at … --id`, `--local-time`, `pushctl live-activity start --id`, `POST …/notifications`
/// with an `id`, and the job runner taking a queued id). Every entry point looks the id up (an ordinary job, or a
/// local-time job's waves `id~00`…), describes what it found as a ``Found``, and does what ``decide(id:found:request:)``
/// answers; none decides on its own.
///
/// | stored under the id                    | `.run` (send it here, now)   | `.store` (for the runner)  | `.queued(retry)`           |
/// |----------------------------------------|------------------------------|----------------------------|----------------------------|
/// | nothing                                | create                       | create                     | skip (`done`)              |
/// | cancelled (any wave, any request)      | refuse: exit 1, 409          | refuse: exit 1, 409        | skip (refuse)              |
/// | another job (payload, audience, time, kind) | refuse: exit 2, 409     | refuse: exit 2, 409        | —                          |
/// | same job, scheduled and not yet due    | wait                         | wait                       | wait                       |
/// | same job, completed, nothing deferred  | done (its summary)           | wait                       | done                       |
/// | same job, completed, N deferred        | retry the N deferred         | wait                       | retry if asked, else done  |
/// | same job, running in another process   | join                         | wait                       | resume                     |
/// | same job, pending/running/interrupted  | resume                       | wait                       | resume                     |
///
/// A cancelled id is refused before anything else: an operator who cancelled a send meant it, and a cron line that
/// fires afterwards (with the same or another payload) must not send to everyone.
public enum RunAgain {
    /// What the request asks.
    public enum Request: Sendable, Equatable {
        /// Send it now, here: `pushctl broadcast --id`, `pushctl live-activity start --id`, and the HTTP API (the
        /// server runs what it stores; a job for later waits for its time).
        case run
        /// Store it for `pushctl serve` / `pushctl worker` to run at its time: `--at`, `--local-time` on the CLI.
        case store
        /// The job runner taking an id from its queue; `retryDeferred` when the request that queued it asked for a
        /// completed job's deferred devices.
        case queued(retryDeferred: Bool)
    }

    /// What is stored under the id.
    public struct Found: Sendable, Equatable {
        /// Its state (a local-time job: ``BroadcastState/cancelled`` when any wave was cancelled, else the waves'
        /// aggregate).
        public var state: BroadcastState
        /// True when it is the same request (app, payload, audience, time, and the same kind: local-time or not).
        public var sameJob: Bool
        /// Scheduled and not yet due.
        public var waiting: Bool
        /// Completed with this many devices deferred (retried by the next run).
        public var deferred: Int
        /// Other processes hold live claims on its shards.
        public var heldElsewhere: Bool

        public init(state: BroadcastState, sameJob: Bool, waiting: Bool = false, deferred: Int = 0, heldElsewhere: Bool = false) {
            self.state = state
            self.sameJob = sameJob
            self.waiting = waiting
            self.deferred = deferred
            self.heldElsewhere = heldElsewhere
        }

        /// A local-time job found under the id: cancelled when any of its waves was (an operator's cancel leaves the
        /// completed waves completed), else the waves' aggregate state.
        public static func localTime(waveStates: [BroadcastState], sameJob: Bool) -> Found {
            let state = waveStates.contains(.cancelled) ? BroadcastState.cancelled : BroadcastState.aggregate(waveStates)
            return Found(state: state, sameJob: sameJob)
        }
    }

    /// Why a request is refused, in each entry point's terms.
    public struct Refusal: Sendable, Equatable, Error {
        /// The CLI's exit code (1: cancelled, a refusal of the job; 2: a usage error, another job under the id).
        public var exitCode: Int32
        /// The HTTP status (409 both).
        public var httpStatus: Int
        /// The API's error code (`job_cancelled`, `id_conflict`).
        public var code: String
        /// One line.
        public var message: String
    }

    /// What to do.
    public enum Decision: Sendable, Equatable {
        /// Nothing stored: store it (and run it, or leave it for its time).
        case create
        /// The same job is stored and there is nothing to start here now (not yet due, or stored for the runner):
        /// answer with the stored job.
        case wait
        /// Completed, nothing deferred: not sent again (its summary is the answer).
        case done
        /// Completed with deferred devices: run again for those only.
        case retryDeferred(Int)
        /// Running in another process: work on the shards nobody holds and wait for the rest.
        case join
        /// Pending, interrupted, or running with nobody on it: run it from where it is.
        case resume
        /// Refused: nothing stored, nothing sent.
        case refuse(Refusal)

        /// True when the entry point must run the job (create aside).
        public var runs: Bool {
            switch self {
            case .retryDeferred, .join, .resume: return true
            default: return false
            }
        }
    }

    /// The table above.
    public static func decide(id: String, found: Found?, request: Request) -> Decision {
        guard let found else {
            if case .queued = request { return .done }
            return .create
        }
        if found.state == .cancelled {
            return .refuse(Refusal(
                exitCode: 1, httpStatus: 409, code: "job_cancelled",
                message: "job \(id) was cancelled; nothing sent (a cancelled id is final: use another id)"))
        }
        if !found.sameJob {
            if case .queued = request { return .done }
            return .refuse(Refusal(
                exitCode: 2, httpStatus: 409, code: "id_conflict",
                message: "job \(id) exists with a different app, payload, target, time or kind (local-time or not); use another id"))
        }
        if found.waiting { return .wait }
        switch request {
        case .store:
            return .wait
        case .queued(let retryDeferred):
            if found.state == .completed { return retryDeferred ? .retryDeferred(found.deferred) : .done }
            return .resume
        case .run:
            if found.state == .completed { return found.deferred > 0 ? .retryDeferred(found.deferred) : .done }
            if found.state == .running && found.heldElsewhere { return .join }
            return .resume
        }
    }
}
