import PushCore

extension SQLiteRegistry {
    /// Appends delivery results to the delivery log in one transaction (call it per sent batch).
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recordDeliveries(_ records: [DeliveryRecord]) throws(StoreError) {
        guard !records.isEmpty else { return }
        try write { (db) throws(StoreError) in
            try Self.insertDeliveries(records, in: db)
            try Self.countDeliveries(DeliveryCount.tally(records), in: db)
        }
    }

    /// Inserts delivery-log rows inside the caller's transaction (shared with broadcast checkpoints); counting
    /// them is the caller's (``countDeliveries(_:in:)``).
    static func insertDeliveries(_ records: [DeliveryRecord], in db: Connection) throws(StoreError) {
        let insert = try db.statement(
            """
            INSERT INTO delivery_log (app, apns_id, unique_id, token, status, reason, attempts,
                possibly_duplicated, first_attempt_ms, finished_ms, kind, broadcast_id, service)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """)
        for record in records {
            try insert.bind(1, record.app)
            try insert.bind(2, record.notificationId)
            try insert.bind(3, record.uniqueId)
            try insert.bind(4, record.token.hex)
            try insert.bind(5, Int64(record.status))
            try insert.bind(6, record.reason)
            try insert.bind(7, Int64(record.attempts))
            try insert.bind(8, Int64(record.possiblyDuplicated ? 1 : 0))
            try insert.bind(9, record.firstAttemptMs)
            try insert.bind(10, record.finishedMs)
            try insert.bind(11, record.kind?.rawValue)
            try insert.bind(12, record.broadcastId)
            try insert.bind(13, record.service.rawValue)
            try insert.run()
        }
    }

    /// Adds a tally to the delivery counters, inside the caller's transaction.
    static func countDeliveries(_ tally: DeliveryCount.Tally, in db: Connection) throws(StoreError) {
        guard !tally.isEmpty else { return }
        let upsert = try db.statement("""
            INSERT INTO delivery_counters (app, service, status, reason, count, retries) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (app, service, status, reason) DO UPDATE SET count = count + excluded.count, retries = retries + excluded.retries
            """)
        for (key, sums) in tally {
            try upsert.bind(1, key.app)
            try upsert.bind(2, key.service.rawValue)
            try upsert.bind(3, Int64(key.status))
            try upsert.bind(4, key.reason)
            try upsert.bind(5, Int64(sums.count))
            try upsert.bind(6, Int64(sums.retries))
            try upsert.run()
        }
    }

    /// Sets the last-success time of `tokens` (never moving it backwards), in one transaction.
    /// Unknown tokens are ignored.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func markSuccess(app: String, tokens: [DeviceToken], atMs: Int64) throws(StoreError) {
        guard !tokens.isEmpty else { return }
        try write { (db) throws(StoreError) in try Self.markSuccess(app: app, tokens: tokens, atMs: atMs, in: db) }
    }

    /// The body of ``markSuccess(app:tokens:atMs:)``; the caller owns the transaction.
    static func markSuccess(app: String, tokens: [DeviceToken], atMs: Int64, in db: Connection) throws(StoreError) {
        let update = try db.statement(
            """
            UPDATE devices SET last_success_ms = max(coalesce(last_success_ms, 0), ?3)
            WHERE app = ?1 AND token = ?2
            """)
        for token in tokens {
            try update.bind(1, app)
            try update.bind(2, token.hex)
            try update.bind(3, atMs)
            try update.run()
        }
    }

    /// The newest delivery-log records of `app`, newest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func recentDeliveries(app: String, limit: Int = 100) throws(StoreError) -> [DeliveryRecord] {
        try read { (db) throws(StoreError) -> [DeliveryRecord] in
            let select = try db.statement(
                """
                SELECT apns_id, unique_id, token, status, reason, attempts, possibly_duplicated,
                    first_attempt_ms, finished_ms, service
                FROM delivery_log WHERE app = ?1 ORDER BY id DESC LIMIT ?2
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, Int64(limit))
            var records: [DeliveryRecord] = []
            while try select.step() {
                guard let token = try? DeviceToken(parsing: select.text(2)) else {
                    throw StoreError(.corrupt, "delivery log holds an invalid token")
                }
                records.append(
                    DeliveryRecord(
                        app: app, notificationId: select.text(0), uniqueId: select.optionalText(1), token: token,
                        status: Int(select.int64(3)), reason: select.optionalText(4), attempts: Int(select.int64(5)),
                        possiblyDuplicated: select.int64(6) != 0, firstAttemptMs: select.int64(7),
                        finishedMs: select.int64(8), service: PushService(rawValue: select.text(9)) ?? .apns))
            }
            return records
        }
    }
}
