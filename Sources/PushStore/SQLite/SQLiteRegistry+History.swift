import PushCore

/// The delivery history query on SQLite (see ``RegistryStore/deliveries(_:)``).
extension SQLiteRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deliveries(_ query: DeliveryQuery) throws(StoreError) -> DeliveryPage {
        try read { (db) throws(StoreError) -> DeliveryPage in
            let select = try Self.historyStatement(query, prefix: "", in: db)
            defer { select.reset() }
            var records: [DeliveryRecord] = []
            var last: DeliveryCursor?
            var more = false
            while try select.step() {
                guard records.count < query.limit else {
                    more = true
                    break
                }
                guard let token = try? DeviceToken(parsing: select.text(2)) else {
                    throw StoreError(.corrupt, "delivery log holds an invalid token")
                }
                records.append(DeliveryRecord(
                    app: query.app, notificationId: select.text(0), uniqueId: select.optionalText(1), token: token,
                    status: Int(select.int64(3)), reason: select.optionalText(4), attempts: Int(select.int64(5)),
                    possiblyDuplicated: select.int64(6) != 0, firstAttemptMs: select.int64(7), finishedMs: select.int64(8),
                    kind: DeliveryOutcome.Kind(rawValue: select.text(9)), broadcastId: select.optionalText(10),
                    service: PushService(rawValue: select.text(12)) ?? .apns))
                last = DeliveryCursor(finishedMs: select.int64(8), id: select.int64(11))
            }
            return DeliveryPage(records: records, next: more ? last : nil)
        }
    }

    /// The plan SQLite picks for `query` (`EXPLAIN QUERY PLAN`, one detail per line): tests check that the
    /// history reads through an index.
    func deliveriesPlan(_ query: DeliveryQuery) throws(StoreError) -> [String] {
        try read { (db) throws(StoreError) -> [String] in
            let select = try Self.historyStatement(query, prefix: "EXPLAIN QUERY PLAN ", in: db)
            defer { select.reset() }
            var lines: [String] = []
            while try select.step() { lines.append(select.text(3)) }
            return lines
        }
    }

    /// The history statement with only the conditions asked for, so the planner picks the index that fits:
    /// (app, token, finished_ms) for a token, (app, broadcast_id, finished_ms) for a broadcast, else (app,
    /// finished_ms); each entry ends with the rowid, so (finished_ms DESC, id DESC) is the index's own order.
    /// One row more than the page is asked for, to know whether another page follows.
    private static func historyStatement(_ query: DeliveryQuery, prefix: String, in db: Connection) throws(StoreError) -> Statement {
        var conditions = ["app = ?1"]
        if query.token != nil { conditions.append("token = ?2") }
        if query.broadcastId != nil { conditions.append("broadcast_id = ?3") }
        if query.sinceMs != nil { conditions.append("finished_ms >= ?4") }
        if query.kind != nil { conditions.append("\(DeliveryQuery.kindExpression) = ?5") }
        if query.after != nil { conditions.append("finished_ms <= ?6 AND (finished_ms < ?6 OR id < ?7)") }
        let select = try db.statement(prefix + """
            SELECT apns_id, unique_id, token, status, reason, attempts, possibly_duplicated, first_attempt_ms, finished_ms,
                \(DeliveryQuery.kindExpression), broadcast_id, id, service
            FROM delivery_log WHERE \(conditions.joined(separator: " AND "))
            ORDER BY finished_ms DESC, id DESC LIMIT ?8
            """)
        try select.bind(1, query.app)
        if let token = query.token { try select.bind(2, token.hex) }
        if let id = query.broadcastId { try select.bind(3, id) }
        if let since = query.sinceMs { try select.bind(4, since) }
        if let kind = query.kind { try select.bind(5, kind.rawValue) }
        if let after = query.after {
            try select.bind(6, after.finishedMs)
            try select.bind(7, after.id)
        }
        try select.bind(8, Int64(query.limit + 1))
        return select
    }
}
