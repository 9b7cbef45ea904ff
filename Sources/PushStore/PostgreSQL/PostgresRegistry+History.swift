import PostgresNIO
import PushCore

/// The delivery history query on PostgreSQL (see ``RegistryStore/deliveries(_:)``).
extension PostgresRegistry {
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deliveries(_ query: DeliveryQuery) throws(StoreError) -> DeliveryPage {
        let (sql, binds) = Self.historyQuery(query)
        typealias Row = (String, String?, String, Int64, String?, Int64, Bool, Int64, Int64, String, String?, Int64, String)
        let rows = try pool.withConnection { (db) throws(StoreError) -> [Row] in
            try db.rows(PostgresQuery(unsafeSQL: sql, binds: binds), as: Row.self)
        }
        var records: [DeliveryRecord] = []
        var last: DeliveryCursor?
        for (notificationId, unique, token, status, reason, attempts, dup, first, finished, kind, broadcast, id, service) in rows.prefix(query.limit) {
            guard let parsed = try? DeviceToken(parsing: token) else { throw StoreError(.corrupt, "delivery log holds an invalid token") }
            records.append(DeliveryRecord(
                app: query.app, notificationId: notificationId, uniqueId: unique, token: parsed, status: Int(status), reason: reason,
                attempts: Int(attempts), possiblyDuplicated: dup, firstAttemptMs: first, finishedMs: finished,
                kind: DeliveryOutcome.Kind(rawValue: kind), broadcastId: broadcast, service: PushService(rawValue: service) ?? .apns))
            last = DeliveryCursor(finishedMs: finished, id: id)
        }
        return DeliveryPage(records: records, next: rows.count > query.limit ? last : nil)
    }

    /// The plan PostgreSQL picks for `query` with sequential scans discouraged (`EXPLAIN`, one line per row):
    /// tests check that an index can serve every filter combination (on a small table the planner would
    /// rightly prefer a sequential scan).
    func deliveriesPlan(_ query: DeliveryQuery) throws(StoreError) -> [String] {
        let (sql, binds) = Self.historyQuery(query)
        return try pool.transaction { (db) throws(StoreError) -> [String] in
            try db.execute("SET LOCAL enable_seqscan = off")
            return try db.rows(PostgresQuery(unsafeSQL: "EXPLAIN " + sql, binds: binds), as: (String).self)
        }
    }

    /// The history statement with only the conditions asked for: (app, finished_ms, id), (app, token,
    /// finished_ms, id) or (app, broadcast_id, finished_ms, id) serves it in its own order, the cursor a row
    /// comparison on the index's trailing columns. One row more than the page, to know whether another follows.
    private static func historyQuery(_ query: DeliveryQuery) -> (String, PostgresBindings) {
        var binds = PostgresBindings()
        var conditions: [String] = []
        func add(_ condition: (String) -> String, _ value: some PostgresNonThrowingEncodable) {
            binds.append(value)
            conditions.append(condition("$\(binds.count)"))
        }
        add({ "app = \($0)" }, query.app)
        if let token = query.token { add({ "token = \($0)" }, token.hex) }
        if let id = query.broadcastId { add({ "broadcast_id = \($0)" }, id) }
        if let since = query.sinceMs { add({ "finished_ms >= \($0)" }, since) }
        if let kind = query.kind { add({ "\(DeliveryQuery.kindExpression) = \($0)" }, kind.rawValue) }
        if let after = query.after {
            binds.append(after.finishedMs)
            binds.append(after.id)
            conditions.append("(finished_ms, id) < ($\(binds.count - 1), $\(binds.count))")
        }
        binds.append(Int64(query.limit + 1))
        let sql = """
            SELECT apns_id, unique_id, token, status::bigint, reason, attempts::bigint, possibly_duplicated,
                first_attempt_ms, finished_ms, \(DeliveryQuery.kindExpression), broadcast_id, id, service
            FROM delivery_log WHERE \(conditions.joined(separator: " AND "))
            ORDER BY finished_ms DESC, id DESC LIMIT $\(binds.count)
            """
        return (sql, binds)
    }
}
