import PushCore

extension SQLiteRegistry {
    /// Applies an APNs verdict to a token (see ``PruneGate``: the answers ``APNsAnswerRule`` says prune; a gated
    /// one deletes only when the token's last registration is earlier than its timestamp). Other answers are
    /// `.invalidInput`: they say nothing about the token. Every delete and every skip is written to the prune log.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    @discardableResult
    public func prune(app: String, token: DeviceToken, _ request: PruneRequest) throws(StoreError) -> PruneOutcome {
        try PruneGate.check(request)
        let now = nowMs()
        return try write { (db) throws(StoreError) -> PruneOutcome in
            try Self.prune(app: app, token: token, request, now: now, in: db)
        }
    }

    /// The body of ``prune(app:token:_:)``; the caller owns the transaction.
    static func prune(
        app: String, token: DeviceToken, _ request: PruneRequest, now: Int64, in db: Connection
    ) throws(StoreError) -> PruneOutcome {
        let (reason, apnsTimestampMs) = (request.reason, request.apnsTimestampMs)
        let keep: Bool, lastRegisteredMs: Int64, service: String
        if let row = try find(app: app, token: token, in: db) {
            keep = PruneGate.keeps(request, lastRegisteredMs: row.lastRegisteredMs)
            lastRegisteredMs = row.lastRegisteredMs
            service = row.service
            if !keep { try deleteDevice(id: row.id, in: db) }
        } else if let la = try pruneLiveActivityToken(app: app, token: token, request, in: db) {
            (keep, lastRegisteredMs) = la
            service = PushService.apns.rawValue  // Live Activity tokens are APNs'
        } else {
            return .notFound
        }
        let log = try db.statement(
            """
            INSERT INTO prune_log (app, token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        try log.bind(1, app)
        try log.bind(2, token.hex)
        try log.bind(3, reason)
        try log.bind(4, PruneGate.action(keep: keep))
        let counter = try db.statement("""
            INSERT INTO prune_counters (app, service, reason, action, count) VALUES (?1, ?2, ?3, ?4, 1)
            ON CONFLICT (app, service, reason, action) DO UPDATE SET count = count + 1
            """)
        try counter.bind(1, app)
        try counter.bind(2, service)
        try counter.bind(3, PruneGate.counterReason(request))
        try counter.bind(4, PruneGate.action(keep: keep))
        try counter.run()
        try log.bind(5, apnsTimestampMs)
        try log.bind(6, lastRegisteredMs)
        try log.bind(7, now)
        try log.run()
        return PruneGate.outcome(keep: keep)
    }

    /// The newest prune-log entries of `app`, newest first.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneLog(app: String, limit: Int = 100) throws(StoreError) -> [PruneLogEntry] {
        try read { (db) throws(StoreError) -> [PruneLogEntry] in
            let select = try db.statement(
                """
                SELECT token, reason, action, apns_timestamp_ms, last_registered_ms, at_ms FROM prune_log
                WHERE app = ?1 ORDER BY id DESC LIMIT ?2
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, Int64(limit))
            var entries: [PruneLogEntry] = []
            while try select.step() {
                guard let token = try? DeviceToken(parsing: select.text(0)) else {
                    throw StoreError(.corrupt, "prune log holds an invalid token")
                }
                entries.append(
                    PruneLogEntry(
                        app: app, token: token, reason: select.text(1),
                        outcome: select.text(2) == "deleted" ? .deleted : .skippedNewerRegistration,
                        apnsTimestampMs: select.optionalInt64(3), lastRegisteredMs: select.optionalInt64(4),
                        atMs: select.int64(5)))
            }
            return entries
        }
    }
}
