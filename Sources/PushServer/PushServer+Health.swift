import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addHealthRoutes(to router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in self.health() }
        router.get("/metrics") { _, _ in self.metricsResponse() }
    }

    /// `GET /healthz`: the database is reachable and each app's credentials are loaded (days to expiry).
    /// 200 when all is well, 503 otherwise, with the details either way.
    func health() -> Response {
        var healthy = true
        var database: [(String, JSONValue)] = [("path", .string(configuration.database))]
        do {
            database.append(("schemaVersion", .int(try registry.schemaVersion())))
            database.append(("ok", .bool(true)))
        } catch {
            healthy = false
            database.append(("ok", .bool(false)))
            database.append(("error", .string(error.message)))
        }
        var apps: [(String, JSONValue)] = []
        for (id, settings) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var fields: [(String, JSONValue)] = [("endpoint", .string(settings.endpoint.description))]
            if let status = credentials[id] {
                fields.append(("credentials", .string(status.kind)))
                fields.append(("loaded", .bool(status.loaded)))
                if let days = status.daysLeft { fields.append(("daysToExpiry", .int(Int64(days)))) }
                if let error = status.error { fields.append(("error", .string(error))) }
                if !status.loaded || (status.daysLeft ?? 1) < 0 { healthy = false }
            } else {
                fields.append(("loaded", .bool(false)))
                healthy = false
            }
            apps.append((id, .object(fields)))
        }
        let body: JSONValue = .object([
            ("status", .string(healthy ? "ok" : "degraded")), ("database", .object(database)), ("apps", .object(apps)),
        ])
        return JSONResponse.make(healthy ? .ok : .serviceUnavailable, body)
    }
}
