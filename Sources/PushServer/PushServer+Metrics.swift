import Hummingbird
import PushCore
import PushStore

extension PushServer {
    /// `GET /metrics`: Prometheus text. Delivery, retry and prune counts are the database's counters (kept as
    /// outcomes commit, so sends by any process — CLI, cron broadcasts, workers, this server — count, and they
    /// never go down when retention trims the logs); the webhook backlog is counted per app with a webhook.
    func metricsResponse() -> Response {
        var text = prometheus.emitToString()
        if let counts = try? registry.deliveryCounts() {
            text += "# HELP pushprovider_deliveries_total Notifications with a final outcome\n"
            text += "# TYPE pushprovider_deliveries_total counter\n"
            // Rows counted by older versions hold unreduced reasons: several rows can make one series.
            var series: [(app: String, status: Int, reason: String, count: Int)] = []
            var retries: [String: Int] = [:]
            for c in counts {
                retries[c.app, default: 0] += c.retries
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
            text += "# HELP pushprovider_retries_total Attempts beyond the first (resends after transient failures)\n"
            text += "# TYPE pushprovider_retries_total counter\n"
            for (app, n) in retries.sorted(by: { $0.key < $1.key }) {
                text += "pushprovider_retries_total{app=\"\(MetricLabels.escape(app))\"} \(n)\n"
            }
        }
        if let prunes = try? registry.pruneCounts() {
            text += "# HELP pushprovider_prunes_total Tokens pruned (or kept because of a newer registration)\n"
            text += "# TYPE pushprovider_prunes_total counter\n"
            for p in prunes {
                text += "pushprovider_prunes_total{app=\"\(MetricLabels.escape(p.app))\",reason=\"\(MetricLabels.escape(p.reason))\",outcome=\"\(MetricLabels.escape(p.outcome))\"} \(p.count)\n"
            }
        }
        let hooked = configuration.apps.filter { $0.value.webhook != nil }.keys.sorted()
        if !hooked.isEmpty {
            text += "# HELP pushprovider_webhook_backlog Webhook events waiting to be delivered\n"
            text += "# TYPE pushprovider_webhook_backlog gauge\n"
            for app in hooked {
                guard let n = try? registry.deliveryStore.webhookBacklog(app: app) else { continue }
                text += "pushprovider_webhook_backlog{app=\"\(MetricLabels.escape(app))\"} \(n)\n"
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
