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
                    fields.append(("expiresAt", .string(Self.rfc3339(notAfter))))
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

    /// Unix seconds as RFC 3339 UTC, e.g. `2027-01-31T12:00:00Z`.
    static func rfc3339(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).ISO8601Format()
    }

    /// `GET /metrics`: Prometheus text. Delivery and prune counts are read from the database so sends made
    /// by any process (CLI, cron broadcasts, this server) are included.
    func metricsResponse() -> Response {
        var text = prometheus.emitToString()
        if let counts = try? registry.deliveryCounts() {
            text += "# HELP pushprovider_deliveries_total Notifications with a final outcome, from the delivery log\n"
            text += "# TYPE pushprovider_deliveries_total counter\n"
            // Stored reasons are reduced to a bounded label set, so several rows can make one series.
            var series: [(app: String, status: Int, reason: String, count: Int)] = []
            for c in counts {
                let reason = MetricLabels.reason(status: c.status, reason: c.reason)
                if let i = series.firstIndex(where: { $0.app == c.app && $0.status == c.status && $0.reason == reason }) {
                    series[i].count += c.count
                } else {
                    series.append((c.app, c.status, reason, c.count))
                }
            }
            for c in series {
                text += "pushprovider_deliveries_total{app=\"\(MetricLabels.escape(c.app))\",status=\"\(c.status)\",reason=\"\(MetricLabels.escape(c.reason))\"} \(c.count)\n"
            }
        }
        if let prunes = try? registry.pruneCounts() {
            text += "# HELP pushprovider_prunes_total Tokens pruned (or kept because of a newer registration)\n"
            text += "# TYPE pushprovider_prunes_total counter\n"
            for p in prunes {
                text += "pushprovider_prunes_total{app=\"\(MetricLabels.escape(p.app))\",reason=\"\(MetricLabels.escape(p.reason))\",outcome=\"\(MetricLabels.escape(p.outcome))\"} \(p.count)\n"
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
