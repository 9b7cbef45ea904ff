import PushCore

extension DeliveryQuery {
    /// A query from text parameters as the API and the CLI receive them (nil: not given). `limit` must be
    /// 1…``maxLimit`` (default ``defaultLimit``); `since` RFC 3339 or seconds since 1970; `status` one of
    /// ``kinds``; `cursor` a ``DeliveryPage/next`` handed out before. `names` maps each parameter to the name the
    /// caller knows it by (`--since` on the CLI) for the message.
    public static func parse(
        app: String, token: String?, broadcast: String?, since: String?, status: String?, limit: String?,
        cursor: String?, names: [String: String] = [:]
    ) throws(DeliveryQueryError) -> DeliveryQuery {
        func fail(_ parameter: String, _ what: String) -> DeliveryQueryError {
            DeliveryQueryError(parameter: parameter, message: "\(names[parameter] ?? parameter) \(what)")
        }
        var query = DeliveryQuery(app: app)
        if let token {
            do { query.token = try DeviceToken(parsing: token) } catch { throw fail("token", "is not a device token: \(error.description)") }
        }
        if let broadcast {
            guard PushConfiguration.isValidAppId(broadcast) else {
                throw fail("broadcast", "must be a broadcast or job id: 1-64 characters of A-Z a-z 0-9 . _ -")
            }
            query.broadcastId = broadcast
        }
        if let since {
            guard let ms = try? Timestamp.parse(since, allowSpace: false) else {
                throw fail("since", "must be an RFC 3339 time (2026-11-24T08:00:00Z) or seconds since 1970, not '\(since.prefix(40))'")
            }
            query.sinceMs = ms
        }
        if let status {
            guard let kind = DeliveryOutcome.Kind(rawValue: status), kinds.contains(kind) else {
                throw fail("status", "must be one of \(kinds.map(\.rawValue).joined(separator: ", ")), not '\(status.prefix(40))'")
            }
            query.kind = kind
        }
        if let limit {
            do { query.limit = try ListLimit.parse(limit, maximum: maxLimit) } catch { throw fail("limit", error.message) }
        }
        if let cursor {
            guard let position = DeliveryCursor(encoded: cursor) else {
                throw fail("cursor", "is not a cursor this server handed out")
            }
            query.after = position
        }
        return query
    }
}
