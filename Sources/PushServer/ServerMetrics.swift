import Prometheus

/// The server's in-process metrics, on a Prometheus registry served at `/metrics`.
/// Delivery counts come from the registry database at scrape time, so sends made by other processes
/// (`pushctl send`, cron broadcasts) show up too.
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let requestDuration: DurationHistogram

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.requestDuration = registry.makeDurationHistogram(
            name: "pushprovider_http_request_duration_seconds",
            buckets: [.microseconds(250), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(25), .milliseconds(100), .seconds(1)],
            help: "HTTP API request latency")
    }

    /// Counts an HTTP request by route and status.
    func request(route: String, status: Int) {
        registry.makeCounter(
            name: "pushprovider_http_requests_total", labels: [("route", route), ("status", String(status))],
            help: "HTTP API requests by route and status"
        ).increment()
    }

    /// Counts a registration by app and outcome (created, updated, replaced).
    func registration(app: String, outcome: String) {
        registry.makeCounter(
            name: "pushprovider_registrations_total", labels: [("app", app), ("outcome", outcome)],
            help: "Device registrations by outcome"
        ).increment()
    }
}
