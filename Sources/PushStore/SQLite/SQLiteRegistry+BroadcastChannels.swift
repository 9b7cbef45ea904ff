import PushCore

extension SQLiteRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func saveBroadcastChannel(_ record: BroadcastChannelRecord) throws(StoreError) {
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let upsert = try db.statement("""
                INSERT INTO broadcast_channels (app, environment, channel_id, storage_policy, label, created_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (app, environment, channel_id) DO UPDATE SET storage_policy = excluded.storage_policy,
                    label = coalesce(excluded.label, broadcast_channels.label)
                """)
            try upsert.bind(1, record.app)
            try upsert.bind(2, record.environment.rawValue)
            try upsert.bind(3, record.channelId)
            try upsert.bind(4, Int64(record.storagePolicy.rawValue))
            try upsert.bind(5, record.label)
            try upsert.bind(6, record.createdMs > 0 ? record.createdMs : now)
            try upsert.run()
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func broadcastChannels(app: String) throws(StoreError) -> [BroadcastChannelRecord] {
        try read { (db) throws(StoreError) -> [BroadcastChannelRecord] in
            let select = try db.statement("""
                SELECT environment, channel_id, storage_policy, label, created_ms FROM broadcast_channels
                WHERE app = ?1 ORDER BY created_ms, channel_id
                """)
            defer { select.reset() }
            try select.bind(1, app)
            var out: [BroadcastChannelRecord] = []
            while try select.step() {
                out.append(BroadcastChannelRecord(
                    app: app, environment: APNsEnvironment(rawValue: select.text(0)) ?? .production, channelId: select.text(1),
                    storagePolicy: ChannelStoragePolicy(rawValue: Int(select.int64(2))) ?? .noStorage,
                    label: select.optionalText(3), createdMs: select.int64(4)))
            }
            return out
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func deleteBroadcastChannel(app: String, environment: APNsEnvironment, channelId: String) throws(StoreError) -> Bool {
        try write { (db) throws(StoreError) -> Bool in
            let delete = try db.statement("DELETE FROM broadcast_channels WHERE app = ?1 AND environment = ?2 AND channel_id = ?3")
            try delete.bind(1, app)
            try delete.bind(2, environment.rawValue)
            try delete.bind(3, channelId)
            try delete.run()
            return db.changes > 0
        }
    }
}
