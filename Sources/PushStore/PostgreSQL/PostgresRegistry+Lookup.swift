import PostgresNIO
import PushCore

/// One device, and the delivery and prune counters. (The twin of `SQLiteRegistry+Lookup.swift`.)
extension PostgresRegistry {
    static let deviceColumns = "token, environment, channels, created_ms, last_registered_ms, last_success_ms, service, subscription"

    static func device(_ row: (String, String, String, Int64, Int64, Int64?, String, String?)) -> RegisteredDevice {
        var device = RegisteredDevice(
            token: DeviceToken(trustedCanonicalHex: row.0), environment: APNsEnvironment(rawValue: row.1) ?? .production,
            channels: Channels.decode(row.2), createdMs: row.3, lastRegisteredMs: row.4, lastSuccessMs: row.5)
        device.setService(row.6, subscription: row.7)
        return device
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice? {
        let hex = token.hex
        return try pool.withConnection { (db) throws(StoreError) -> RegisteredDevice? in
            try db.row(
                PostgresQuery(unsafeSQL: "SELECT \(Self.deviceColumns) FROM devices WHERE app = $1 AND token = $2",
                              binds: Self.binds(app, hex)),
                as: (String, String, String, Int64, Int64, Int64?, String, String?).self
            ).map(Self.device)
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func deliveryCounts() throws(StoreError) -> [DeliveryCount] {
        try pool.withConnection { (db) throws(StoreError) -> [DeliveryCount] in
            let rows = try db.rows("""
                SELECT app, service, status::bigint, reason, sum(count)::bigint, sum(retries)::bigint FROM delivery_counters
                GROUP BY app, service, status, reason ORDER BY 1, 2, 3, 4
                """, as: (String, String, Int64, String, Int64, Int64).self)
            return rows.map { (row: (String, String, Int64, String, Int64, Int64)) -> DeliveryCount in
                let reason: String? = row.3.isEmpty ? nil : row.3
                return DeliveryCount(
                    app: row.0, service: PushService(rawValue: row.1), status: Int(row.2), reason: reason, count: Int(row.4),
                    retries: Int(row.5))
            }
        }
    }

    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func pruneCounts() throws(StoreError) -> [PruneCount] {
        try pool.withConnection { (db) throws(StoreError) -> [PruneCount] in
            try db.rows(
                "SELECT app, service, reason, action, sum(count)::bigint FROM prune_counters GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
                as: (String, String, String, String, Int64).self
            ).map {
                PruneCount(app: $0.0, service: PushService(rawValue: $0.1), reason: $0.2, outcome: $0.3, count: Int($0.4))
            }
        }
    }
}
