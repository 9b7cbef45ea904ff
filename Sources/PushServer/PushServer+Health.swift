import Foundation
import Hummingbird
import PushCore
import PushStore

extension PushServer {
    /// `/healthz`, `/livez` and `/readyz` on every listener; `/healthz/details` and `/metrics` on the admin listener
    /// only: the details name every app, its endpoint and its credentials' expiry, which the internet has no
    /// business reading.
    func addHealthRoutes(to router: Router<BasicRequestContext>, listener: Listener) {
        router.get("/healthz") { _, _ in self.healthSummary() }
        router.get("/livez") { _, _ in Self.liveness() }
        router.get("/readyz") { _, _ in self.readiness() }
        guard listener == .admin else { return }
        router.get("/healthz/details") { _, _ in self.healthDetails() }
        router.get("/metrics") { _, _ in await self.metricsResponse() }
    }

    /// `GET /healthz`: the same verdict as ``healthDetails()`` without the details, for load balancers:
    /// `{"status":"ok"}` 200 or `{"status":"degraded"}` 503.
    func healthSummary() -> Response {
        let healthy = healthReport().healthy
        return Self.verdict(healthy, healthy ? "ok" : "degraded")
    }

    /// A health route's answer: `{"status": status}`, 200 when `good`, else 503.
    static func verdict(_ good: Bool, _ status: String) -> Response {
        JSONResponse.make(good ? .ok : .serviceUnavailable, .object([("status", .string(status))]))
    }

    /// `GET /livez`: the process answers HTTP, and nothing else. A liveness probe that also asked the database would
    /// restart every replica at once during a database outage (which a restart does not cure, and which the pool
    /// recovers from by itself: BusyDatabaseFaultTests), and one that read the credentials' expiry would restart
    /// them for a certificate renewal only a human can do. Always `{"status":"alive"}` 200.
    static func liveness() -> Response {
        verdict(true, "alive")
    }

    /// `GET /readyz`: whether this replica can take requests now, which is whether the database answers — every
    /// API request but the health routes needs it. `{"status":"ready"}` 200, or `{"status":"unavailable"}` 503 when
    /// the ``HealthMonitor``'s last picture says the database is unreachable or no probe has answered yet. Never
    /// waits on the database. Credentials are not part of it: an app whose key did not load makes `/healthz`
    /// degraded, but taking the replica out of the load balancer would not load it, and would stop the other apps.
    func readiness() -> Response {
        let snapshot = health.snapshot
        let ready = snapshot.ok && snapshot.schemaVersion != nil
        return Self.verdict(ready, ready ? "ready" : "unavailable")
    }

    /// `GET /healthz/details` (admin listener): the report behind the verdict.
    func healthDetails() -> Response {
        let report = healthReport()
        return JSONResponse.make(report.healthy ? .ok : .serviceUnavailable, report.body)
    }

    /// The database is reachable and each app's credentials are loaded, with the days to expiry computed now (at
    /// each request). Healthy when all is well; `degraded` when the database is not reachable, credentials did
    /// not load, or a certificate expires in fewer than `healthWarningDays` days. Never waits on the database: its
    /// part is the ``HealthMonitor``'s last picture, so a locked or unreachable database makes `/healthz` answer
    /// `degraded` at once instead of late.
    func healthReport() -> (healthy: Bool, body: JSONValue) {
        let now = self.now()
        let warningDays = configuration.healthWarningDays
        var healthy = true
        var database: [(String, JSONValue)] = [("path", .string(configuration.database))]
        let snapshot = health.snapshot
        if let version = snapshot.schemaVersion { database.append(("schemaVersion", .int(version))) }
        database.append(("ok", .bool(snapshot.ok)))
        if let problem = snapshot.problem {
            healthy = false
            database.append(("error", .string(problem)))
        }
        var apps: [(String, JSONValue)] = []
        for (id, settings) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            var fields: [(String, JSONValue)] = [("services", .array(settings.services.map { .string($0.rawValue) }))]
            // Each other service's credentials (Web Push, FCM, HMS, UnifiedPush) under its service's name; not loaded makes the app degraded.
            // (A server made without them, as a library's test may make one, reports the services' names only.)
            for status in serviceHealth[id] ?? [] where settings.services.contains(status.service) {
                fields.append((status.service.rawValue, status.json))
                if !status.loaded { healthy = false }
            }
            // The APNs credentials and endpoint, at the app's top level (where they were before the other services).
            guard let apns = settings.apns else {
                apps.append((id, .object(fields)))
                continue
            }
            fields.append(("endpoint", .string(apns.endpoint.description)))
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
        return (healthy, body)
    }
}
