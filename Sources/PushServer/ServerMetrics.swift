import Prometheus
import Synchronization

/// The server's in-process metrics, on a Prometheus registry served at `/metrics`.
/// Delivery counts come from the registry database at scrape time, so sends made by other processes
/// (`pushctl send`, cron broadcasts) show up too.
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let requestDuration: DurationHistogram
    // Counters by name and labels: the registry's own lookup matches label arrays on every call.
    private let counters = Mutex<[String: Counter]>([:])

    private func counter(_ name: String, _ labels: [(String, String)], help: String) -> Counter {
        let key = name + labels.map { "|\($0.0)=\($0.1)" }.joined()
        return counters.withLock { cache in
            if let c = cache[key] { return c }
            let c = registry.makeCounter(name: name, labels: labels, help: help)
            cache[key] = c
            return c
        }
    }

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
        counter("pushprovider_http_requests_total", [("route", route), ("status", String(status))],
                help: "HTTP API requests by route and status").increment()
    }

    /// Counts a registration by app and outcome (created, updated, replaced).
    func registration(app: String, outcome: String) {
        counter("pushprovider_registrations_total", [("app", app), ("outcome", outcome)],
                help: "Device registrations by outcome").increment()
    }
}
