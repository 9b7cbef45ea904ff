import Foundation
import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addHealthRoutes(to router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in self.health() }
        router.get("/metrics") { _, _ in self.metricsResponse() }
    }

    /// `GET /healthz`: the database is reachable and each app's credentials are loaded, with the days to
    /// expiry computed now (at each request). 200 when all is well; 503 (`degraded`) when the database is not
    /// reachable, credentials did not load, or a certificate expires in fewer than `healthWarningDays` days.
    func health() -> Response {
        let now = self.now()
        let warningDays = configuration.healthWarningDays
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
                var days = status.daysLeft
                var expired = false
                if let notAfter = status.notAfter {
                    let left = Double(notAfter) - now.timeIntervalSince1970
                    days = Int((left / 86_400).rounded(.down))
                    expired = left <= 0
                    fields.append(("expiresAt", .string(Timestamp.rfc3339(ms: notAfter * 1000))))
                }
                if let days {
                    expired = expired || days < 0
                    fields.append(("daysToExpiry", .int(Int64(days))))
                    fields.append(("expired", .bool(expired)))
                    fields.append(("expiresSoon", .bool(days < warningDays)))
                }
                if let error = status.error { fields.append(("error", .string(error))) }
                if !status.loaded || expired || (days ?? warningDays) < warningDays { healthy = false }
            } else {
                fields.append(("loaded", .bool(false)))
                healthy = false
            }
            apps.append((id, .object(fields)))
        }
        let body: JSONValue = .object([
            ("status", .string(healthy ? "ok" : "degraded")), ("database", .object(database)), ("apps", .object(apps)),
            ("healthWarningDays", .int(Int64(warningDays))),
        ])
        return JSONResponse.make(healthy ? .ok : .serviceUnavailable, body)
    }
}
