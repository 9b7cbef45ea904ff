import PostgresNIO
import PushCore

extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func saveBroadcastChannel(_ record: BroadcastChannelRecord) throws(StoreError) {
        let (app, environment, id) = (record.app, record.environment.rawValue, record.channelId)
        let (policy, label) = (Int64(record.storagePolicy.rawValue), record.label)
        let created: Int64? = record.createdMs > 0 ? record.createdMs : now
        try pool.withConnection { (db) throws(StoreError) in
            try db.query("""
                INSERT INTO broadcast_channels (app, environment, channel_id, storage_policy, label, created_ms)
                VALUES (\(app), \(environment), \(id), \(policy), \(label), coalesce(\(created)::bigint, pp_now_ms()))
                ON CONFLICT (app, environment, channel_id) DO UPDATE SET storage_policy = excluded.storage_policy,
                    label = coalesce(excluded.label, broadcast_channels.label)
                """)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcastChannels(app: String) throws(StoreError) -> [BroadcastChannelRecord] {
        try pool.withConnection { (db) throws(StoreError) -> [BroadcastChannelRecord] in
            try db.rows("""
                SELECT environment, channel_id, storage_policy::bigint, label, created_ms FROM broadcast_channels
                WHERE app = \(app) ORDER BY created_ms, channel_id COLLATE "C"
                """, as: (String, String, Int64, String?, Int64).self).map { r in
                BroadcastChannelRecord(
                    app: app, environment: APNsEnvironment(rawValue: r.0) ?? .production, channelId: r.1,
                    storagePolicy: ChannelStoragePolicy(rawValue: Int(r.2)) ?? .noStorage, label: r.3, createdMs: r.4)
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func deleteBroadcastChannel(app: String, environment: APNsEnvironment, channelId: String) throws(StoreError) -> Bool {
        let env = environment.rawValue
        return try pool.withConnection { (db) throws(StoreError) -> Bool in
            try db.changes("DELETE FROM broadcast_channels WHERE app = \(app) AND environment = \(env) AND channel_id = \(channelId)") > 0
        }
    }
}
