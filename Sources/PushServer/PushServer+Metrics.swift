import Hummingbird
import PushCore
import PushSender
import PushStore

extension PushServer {
    /// `GET /metrics`: Prometheus text. Delivery, retry and prune counts are the database's counters (kept as
    /// outcomes commit, so sends by any process — CLI, cron broadcasts, workers, this server — count, and they
    /// never go down when retention trims the logs); the webhook backlog is counted per app with a webhook.
    func metricsResponse() async -> Response {
        var text = prometheus.emitToString()
        let hooked = configuration.apps.filter { $0.value.webhook != nil }.keys.sorted()
        let apps = Set(configuration.apps.keys)
        // One hop to the store for every number it holds. When it is unavailable the series it holds are left out
        // (a scraper sees them missing, not zero) and `pushprovider_database_up` says why.
        let stored: DatabaseMetrics
        do throws(StoreError) {
            stored = try await registry.run { store in
                let unfinished = try store.broadcasts(app: nil, states: BroadcastState.unfinished)
                    .filter { apps.contains($0.app) }
                var backlog: [(String, Int)] = []
                for app in hooked { backlog.append((app, try store.deliveryStore.webhookBacklog(app: app))) }
                return DatabaseMetrics(
                    deliveries: try store.deliveryCounts(), prunes: try store.pruneCounts(), backlog: backlog,
                    jobs: try unfinished.map { (record: $0, done: try store.broadcastCounts(id: $0.id).done) })
            }
            text += "# HELP pushprovider_database_up 1 when the database answered this scrape\n# TYPE pushprovider_database_up gauge\npushprovider_database_up 1\n"
        } catch {
            health.noteUnavailable(error)
            text += "# HELP pushprovider_database_up 1 when the database answered this scrape\n# TYPE pushprovider_database_up gauge\n"
            text += "# the database did not answer: \(error.message.replacingOccurrences(of: "\n", with: " "))\npushprovider_database_up 0\n"
            text += senderMetrics()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        do {
            let counts = stored.deliveries
            text += "# HELP pushprovider_deliveries_total Notifications with a final outcome\n"
            text += "# TYPE pushprovider_deliveries_total counter\n"
            // Rows counted by older versions hold unreduced reasons: several rows can make one series. Rows counted
            // before the counters knew services have none: their series carry no `service` label (the series
            // dashboards had before, frozen at the upgrade), those since carry the service that answered.
            var series: [(app: String, service: PushService?, status: Int, reason: String, count: Int)] = []
            var retries: [RetryKey: Int] = [:]
            for c in counts {
                retries[RetryKey(app: c.app, service: c.service), default: 0] += c.retries
                let reason = MetricLabels.reason(status: c.status, reason: c.reason)
                if let i = series.firstIndex(where: {
                    $0.app == c.app && $0.service == c.service && $0.status == c.status && $0.reason == reason
                }) {
                    series[i].count += c.count
                } else {
                    series.append((c.app, c.service, c.status, reason, c.count))
                }
            }
            for c in series {
                text += "pushprovider_deliveries_total{\(Self.appAndService(c.app, c.service)),status=\"\(c.status)\",reason=\"\(MetricLabels.escape(c.reason))\"} \(c.count)\n"
            }
            text += "# HELP pushprovider_retries_total Attempts beyond the first (resends after transient failures)\n"
            text += "# TYPE pushprovider_retries_total counter\n"
            for (key, n) in retries.sorted(by: { ($0.key.app, $0.key.service?.rawValue ?? "") < ($1.key.app, $1.key.service?.rawValue ?? "") }) {
                text += "pushprovider_retries_total{\(Self.appAndService(key.app, key.service))} \(n)\n"
            }
        }
        do {
            let prunes = stored.prunes
            text += "# HELP pushprovider_prunes_total Tokens pruned (or kept because of a newer registration)\n"
            text += "# TYPE pushprovider_prunes_total counter\n"
            for p in prunes {
                text += "pushprovider_prunes_total{\(Self.appAndService(p.app, p.service)),reason=\"\(MetricLabels.escape(p.reason))\",outcome=\"\(MetricLabels.escape(p.outcome))\"} \(p.count)\n"
            }
        }
        text += senderMetrics()
        text += Self.jobProgress(stored.jobs)
        if !hooked.isEmpty {
            text += "# HELP pushprovider_webhook_backlog Webhook events waiting to be delivered\n"
            text += "# TYPE pushprovider_webhook_backlog gauge\n"
            for (app, n) in stored.backlog {
                text += "pushprovider_webhook_backlog{app=\"\(MetricLabels.escape(app))\"} \(n)\n"
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The `app` label and, for what was counted since the counters knew services, the `service` label.
    static func appAndService(_ app: String, _ service: PushService?) -> String {
        let a = "app=\"\(MetricLabels.escape(app))\""
        guard let service else { return a }
        return a + ",service=\"\(service.rawValue)\""
    }

    /// A retries series: per app and service (none for what was counted before services).
    struct RetryKey: Hashable {
        var app: String
        var service: PushService?
    }

    /// This server's senders (one per app, once it has sent), per push service: in flight, answer latency,
    /// connections, reconnects, and each endpoint's (APNs host, Web Push origin) reachability and, for APNs, its
    /// pruning breaker. APNs' figures keep their names (`pushprovider_apns_…`); Web Push's are the same figures
    /// under `pushprovider_webpush_…`, its endpoints the push services' origins; FCM's under `pushprovider_fcm_…` (Push
    /// Kit's under `pushprovider_hms_…` and `pushprovider_harmonyos_…`, alike; HarmonyOS's "grants" are the JWTs it
    /// signed), plus
    /// the access tokens its sender asked for (`pushprovider_fcm_access_token_grants_total`) and how many of those requests
    /// failed (`pushprovider_fcm_access_token_grant_failures_total`). UnifiedPush's under `pushprovider_unifiedpush_…`,
    /// but not per endpoint: its endpoints are the distributors its users picked (a self-hosted one names its user's
    /// host, and there are as many as users choose), so instead of `endpoint_up` per origin it counts them,
    /// `pushprovider_unifiedpush_distributors{state="reachable"|"unreachable"}`.
    func senderMetrics() -> String {
        var perService: [(service: String, app: String, sender: any DeliverySender)] = []
        for (app, sender) in jobs.senders.sorted(by: { $0.key < $1.key }) {
            if let router = sender as? ServiceRouter {
                if let apns = router.apns { perService.append(("apns", app, apns)) }
                if let web = router.webPush { perService.append(("webpush", app, web)) }
                if let fcm = router.fcm { perService.append(("fcm", app, fcm)) }
                if let hms = router.hms { perService.append(("hms", app, hms)) }
                if let harmonyos = router.harmonyos { perService.append(("harmonyos", app, harmonyos)) }
                if let up = router.unifiedPush { perService.append(("unifiedpush", app, up)) }
            } else {
                perService.append(("apns", app, sender))
            }
        }
        guard !perService.isEmpty else { return "" }
        var text = ""
        for service in ["apns", "webpush", "fcm", "hms", "harmonyos", "unifiedpush"] {
            let senders = perService.filter { $0.service == service }
            guard !senders.isEmpty else { continue }
            let p = "pushprovider_\(service)"
            let who = switch service { case "apns": "APNs"; case "fcm": "FCM"; case "hms": "Push Kit"; case "harmonyos": "Push Kit (HarmonyOS)"; case "unifiedpush": "the distributor"; default: "the push service" }
            var inFlight = "# HELP \(p)_in_flight Notifications handed to \(who) (or waiting to be) without a result yet\n# TYPE \(p)_in_flight gauge\n"
            var latency = "# HELP \(p)_response_seconds Time from handing a request to the connection to \(who)'s answer\n# TYPE \(p)_response_seconds histogram\n"
            var opened = "# HELP \(p)_connections_opened_total TCP connections opened to \(who)\n# TYPE \(p)_connections_opened_total counter\n"
            var reconnects = "# HELP \(p)_reconnects_total Connections opened again after a drop, GOAWAY or outage\n# TYPE \(p)_reconnects_total counter\n"
            var up = "# HELP \(p)_endpoint_up 1 while the endpoint answers, 0 while unreachable or stopped\n# TYPE \(p)_endpoint_up gauge\n"
            var grants = "# HELP \(p)_access_token_grants_total OAuth 2.0 access tokens requested from the token endpoint (one per renewal period, whatever the connections, plus the failed ones: each is retried after its backoff)\n# TYPE \(p)_access_token_grants_total counter\n"
            var grantFailures = "# HELP \(p)_access_token_grant_failures_total Access token requests that failed: refused, or no answer in time\n# TYPE \(p)_access_token_grant_failures_total counter\n"
            var distributors = "# HELP \(p)_distributors Distributor origins the sender has sent to, reachable or not (counted, not named: each is a user's choice)\n# TYPE \(p)_distributors gauge\n"
            var breaker = "# HELP pushprovider_pruning_breaker_tripped 1 while BadDeviceToken prunes are held back for the endpoint\n# TYPE pushprovider_pruning_breaker_tripped gauge\n"
            for (_, app, sender) in senders {
                let a = "app=\"\(MetricLabels.escape(app))\""
                let m = sender.metrics
                inFlight += "\(p)_in_flight{\(a)} \(m.inFlight)\n"
                let h = m.latency
                for (i, bound) in SenderMetrics.latencyBucketsMs.enumerated() {
                    latency += "\(p)_response_seconds_bucket{\(a),le=\"\(Double(bound) / 1000)\"} \(h.cumulative[i])\n"
                }
                latency += "\(p)_response_seconds_bucket{\(a),le=\"+Inf\"} \(h.cumulative.last ?? 0)\n"
                latency += "\(p)_response_seconds_sum{\(a)} \(h.sumSeconds)\n"
                latency += "\(p)_response_seconds_count{\(a)} \(h.count)\n"
                opened += "\(p)_connections_opened_total{\(a)} \(m.connectionsOpened)\n"
                reconnects += "\(p)_reconnects_total{\(a)} \(m.reconnects)\n"
                if let tokens = (sender as? FCMSender)?.tokens ?? (sender as? HMSSender)?.tokens
                    ?? (sender as? HarmonyOSSender)?.tokens
                {
                    grants += "\(p)_access_token_grants_total{\(a)} \(tokens.grantsRequested)\n"
                    grantFailures += "\(p)_access_token_grant_failures_total{\(a)} \(tokens.grantsFailed)\n"
                }
                if service == "unifiedpush" {
                    let conditions = sender.endpointConditions
                    let reachable = conditions.filter(\.reachable).count
                    distributors += "\(p)_distributors{\(a),state=\"reachable\"} \(reachable)\n"
                    distributors += "\(p)_distributors{\(a),state=\"unreachable\"} \(conditions.count - reachable)\n"
                    continue
                }
                for c in sender.endpointConditions {
                    let e = "\(a),endpoint=\"\(MetricLabels.escape(c.endpoint))\""
                    up += "\(p)_endpoint_up{\(e)} \(c.reachable ? 1 : 0)\n"
                    breaker += "pushprovider_pruning_breaker_tripped{\(e)} \(c.breakerTripped ? 1 : 0)\n"
                }
            }
            // The pruning breaker is APNs' (BadDeviceToken); Web Push prunes only on 404/410.
            text += inFlight + latency + opened + reconnects + (service == "unifiedpush" ? distributors : up)
                + (service == "apns" ? breaker : "") + (service == "fcm" || service == "hms" || service == "harmonyos" ? grants + grantFailures : "")
        }
        return text
    }

    /// Devices targeted and done of each unfinished send job or broadcast of the configured apps, from the
    /// database (any process's).
    static func jobProgress(_ jobs: [(record: BroadcastRecord, done: Int)]) -> String {
        guard !jobs.isEmpty else { return "" }
        var total = "# HELP pushprovider_job_devices Devices an unfinished send job or broadcast targets\n# TYPE pushprovider_job_devices gauge\n"
        var done = "# HELP pushprovider_job_devices_done Devices of an unfinished send job or broadcast with a committed outcome\n# TYPE pushprovider_job_devices_done gauge\n"
        for (job, jobDone) in jobs {
            let labels = "app=\"\(MetricLabels.escape(job.app))\",job=\"\(MetricLabels.escape(job.id))\""
            total += "pushprovider_job_devices{\(labels)} \(job.total)\n"
            done += "pushprovider_job_devices_done{\(labels)} \(jobDone)\n"
        }
        return total + done
    }
}

/// What `/metrics` reads from the database in one hop.
struct DatabaseMetrics: Sendable {
    var deliveries: [DeliveryCount]
    var prunes: [PruneCount]
    var backlog: [(String, Int)]
    var jobs: [(record: BroadcastRecord, done: Int)]
}
