import Foundation
import Logging
import PushCore
import PushStore

/// Settings for broadcasts, with their documented defaults.
public struct BroadcastConfiguration: Sendable {
    /// Devices per keyset page (one short read transaction each). Default 1000.
    public var batchSize = 1000
    /// How long a lease lasts without a heartbeat. Default 30 s.
    public var leaseTtlMs: Int64 = 30_000
    /// How often the lease is renewed. Default 5 s.
    public var heartbeatMs: Int64 = 5_000
    /// At most this many notifications per second (`--rate`); nil = as fast as APNs takes them.
    public var rate: Double?
    /// This process's lease owner id: `host:pid:nonce`.
    public var owner = BroadcastConfiguration.defaultOwner()

    /// The defaults.
    public init() {}

    /// `host:pid:nonce` for this process.
    public static func defaultOwner() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    /// True when `owner` names a process on this host that no longer exists (a crashed or killed run).
    public static func ownerIsDead(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":")
        guard parts.count == 3, String(parts[0]) == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else {
            return false
        }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}

/// Live counts while a broadcast runs (this run only; totals come from the store).
public struct BroadcastProgress: Sendable {
    /// Final outcomes in this run.
    public var done = 0
    /// Accepted in this run.
    public var accepted = 0
    /// Not accepted in this run.
    public var failed = 0
    /// Pruned in this run.
    public var pruned = 0
    /// Tokens finished before this run (resume).
    public var doneBefore = 0
    /// Devices targeted.
    public var total = 0
    /// Seconds since this run started.
    public var elapsed: Double = 0
}

/// Why a broadcast could not run.
public struct BroadcastError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// Another process holds the app's lease.
        case running(String)
        /// The id exists with a different payload or target.
        case mismatch
        /// The store failed.
        case store
    }
    /// The code.
    public let code: Code
    /// One line.
    public let message: String
    /// The message.
    public var description: String { message }
}

/// How a broadcast run ended.
public struct BroadcastReport: Sendable {
    /// The broadcast after the run.
    public var record: BroadcastRecord
    /// Totals over all runs.
    public var counts: BroadcastCounts
    /// The sender's counts for this run (breaker and endpoint stops included).
    public var sender: SendSummary
    /// Notifications finished in this run.
    public var sentThisRun: Int
    /// Seconds this run took.
    public var seconds: Double
    /// The signal that interrupted the run, or 0.
    public var signal: Int32
}
