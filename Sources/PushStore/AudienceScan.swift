import PushCore

/// The FROM, key column and condition of an audience scan — one rule for both backends, each in its dialect
/// (``AudienceSQL``). A user's devices are a range of the user index (SQLite is told so with `INDEXED BY`: its
/// planner would otherwise take the app's token index; PostgreSQL's planner picks `devices_user` itself — the
/// tests assert both plans); a channel, given or in the audience, is a range of the channel index; anything
/// else is the app's devices in token order, the same keyset scan as an unfiltered broadcast.
struct AudienceScan {
    var from: String
    var key: String
    var condition: String
    var values: [SQLValue]

    init(_ dialect: AudienceSQL.Dialect, _ record: BroadcastRecord, firstIndex: Int) {
        self.init(
            dialect, app: record.app, environment: record.environment, audience: record.targeting?.audience,
            wave: record.targeting?.wave, channel: record.channel, firstIndex: firstIndex)
    }

    init(
        _ dialect: AudienceSQL.Dialect, app: String, environment: APNsEnvironment?, audience: Audience?, wave: LocalTimeWave?,
        channel: String? = nil, firstIndex: Int
    ) {
        var sql = AudienceSQL(dialect, firstIndex: firstIndex)
        var parts = ["d.app = \(sql.parameter(.text(app)))"]
        if let environment { parts.append("d.environment = \(sql.parameter(.text(environment.rawValue)))") }
        if audience?.user == nil, let name = channel ?? audience?.channel {
            from = "device_channels c JOIN devices d ON d.id = c.device_id"
            key = "c.token"
            parts.append("c.app = \(sql.parameter(.text(app))) AND c.channel = \(sql.parameter(.text(name)))")
        } else {
            from = audience?.user != nil && dialect == .sqlite ? "devices d INDEXED BY devices_user" : "devices d"
            key = "d.token"
        }
        // A user's range is read on the user index; the job's channel, if any, is then checked per row.
        var audience = audience
        if let channel, audience?.user != nil, let clauses = audience?.clauses {
            audience = Audience(clauses + [AudienceClause(field: .channel, test: .equals(.string(channel)))])
        }
        parts.append(sql.condition(audience: audience, wave: wave))
        condition = parts.joined(separator: " AND ")
        values = sql.values
    }
}
