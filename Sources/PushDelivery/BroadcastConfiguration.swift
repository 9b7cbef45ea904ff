import Foundation
import PushCore

/// Settings of the delivery engine, with their documented defaults.
public struct BroadcastConfiguration: Sendable {
    /// Devices per keyset page (one short read each). Default 1000.
    public var batchSize = 1000
    /// How long a lease lasts without a heartbeat (the store's clock). Default 30 s.
    public var leaseTtlMs: Int64 = 30_000
    /// How often the lease is renewed. Default 5 s.
    public var heartbeatMs: Int64 = 5_000
    /// At most this many notifications per second (`--rate`); nil = as fast as APNs takes them.
    public var rate: Double?
    /// Outcomes are committed at least this often… Default 100 ms.
    public var commitIntervalMs = 100
    /// …and at least every this many outcomes. Default 200.
    public var commitBatchSize = 200
    /// How long the database may stay unavailable before the run stops as interrupted. Default 120 s
    /// (`databaseOutageLimitSeconds`).
    public var storeOutageLimitMs = PushConfiguration.defaultDatabaseOutageLimitSeconds * 1000
    /// This process's lease owner id: `host:pid:nonce`.
    public var owner = BroadcastConfiguration.defaultOwner()

    /// The defaults.
    public init() {}

    /// `host:pid:nonce` for this process.
    public static func defaultOwner() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    /// True when `owner` names a process on this host that no longer exists (a crashed or killed run), so its
    /// lease can be taken over without waiting for it to expire.
    @Sendable public static func ownerIsDead(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":")
        guard parts.count == 3, String(parts[0]) == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else {
            return false
        }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
