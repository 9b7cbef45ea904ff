import Foundation
import PushCore

/// Settings of the delivery engine, with their documented defaults.
public struct BroadcastConfiguration: Sendable {
    /// Devices per keyset page (one short read each). Default 1000.
    public var batchSize = 1000
    /// Devices per shard when a broadcast starts (`shardSize`). Default 25,000.
    public var shardSize = BroadcastShard.defaultSize
    /// How long a shard's claim lasts without a heartbeat (the store's clock); a worker that dies holds its
    /// shards this long at most. Default 30 s.
    public var leaseTtlMs: Int64 = 30_000
    /// How often a claim is renewed. Default 5 s.
    public var heartbeatMs: Int64 = 5_000
    /// A shard given back after APNs or the database failed is claimable again after this long. Default 30 s.
    public var shardRetryMs: Int64 = 30_000
    /// How often a run waiting for other workers' shards, or an idle worker, looks again (a PostgreSQL notice
    /// wakes it sooner). Default 1 s.
    public var pollMs = 1000
    /// Outcomes are committed at least this often… Default 100 ms.
    public var commitIntervalMs = 100
    /// …and at least every this many outcomes. Default 200.
    public var commitBatchSize = 200
    /// How long the database may stay unavailable before the run stops as interrupted. Default 120 s
    /// (`databaseOutageLimitSeconds`).
    public var storeOutageLimitMs = PushConfiguration.defaultDatabaseOutageLimitSeconds * 1000
    /// Apps with a webhook: their commits also write outbox events (pruned tokens, final failures).
    public var webhookApps: Set<String> = []
    /// Each app's delivery-log scope (`deliveryLog`); an app not named has the default (``DeliveryLogScope/default``).
    public var deliveryLogs: [String: DeliveryLogScope] = [:]
    /// This process's worker id, the owner of its claims: `host:pid:nonce`.
    public var owner = BroadcastConfiguration.defaultOwner()

    /// The defaults.
    public init() {}

    /// The settings `config` gives (database outage limit, shard size, claim lease), defaults for the rest.
    public init(_ config: PushConfiguration) {
        storeOutageLimitMs = config.databaseOutageLimitSeconds * 1000
        shardSize = config.shardSize
        leaseTtlMs = Int64(config.shardLeaseSeconds) * 1000
        heartbeatMs = max(200, leaseTtlMs / 6)
        webhookApps = Set(config.apps.filter { $0.value.webhook != nil }.keys)
        deliveryLogs = config.deliveryLogs
    }

    /// Which of `app`'s outcomes become delivery-log rows.
    public func deliveryLog(for app: String) -> DeliveryLogScope { deliveryLogs[app] ?? .default }

    /// `host:pid:nonce` for this process.
    public static func defaultOwner() -> String {
        "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    /// True when `owner` names a process on this host that no longer exists (a crashed or killed run), so its
    /// claims can be taken over without waiting for them to expire.
    @Sendable public static func ownerIsDead(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":")
        guard parts.count == 3, String(parts[0]) == ProcessInfo.processInfo.hostName, let pid = Int32(parts[1]) else {
            return false
        }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
