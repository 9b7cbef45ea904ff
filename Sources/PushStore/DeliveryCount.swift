import PushCore

/// Delivery outcomes counted by app, push service, HTTP status and reason (for `/metrics`).
public struct DeliveryCount: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The push service that answered; nil for what was counted before the counters knew services (schema 18 in
    /// SQLite, 15 in PostgreSQL): those counts cannot be split after the fact (the delivery log need not hold
    /// every row they counted), so they stay apart, as the label-less series dashboards already had.
    public var service: PushService?
    /// The HTTP status (0 = no answer from APNs).
    public var status: Int
    /// Apple's reason, if any.
    public var reason: String?
    /// How many notifications ended this way.
    public var count: Int
    /// Attempts beyond the first those notifications took (resends after transient failures).
    public var retries: Int = 0

    /// Creates a count.
    public init(app: String, service: PushService?, status: Int, reason: String?, count: Int, retries: Int = 0) {
        self.app = app
        self.service = service
        self.status = status
        self.reason = reason
        self.count = count
        self.retries = retries
    }

    /// The counter key of a delivery: app, service, status and bounded reason (see ``APNsReason/label(status:reason:)``).
    struct Key: Hashable {
        var app: String
        var service: PushService
        var status: Int
        var reason: String
    }

    /// Sums by counter key.
    typealias Tally = [(key: Key, value: (count: Int, retries: Int))]

    /// `records` summed by counter key.
    static func tally(_ records: [DeliveryRecord]) -> Tally {
        tally(records.lazy.map { ($0.app, $0.service, $0.status, $0.reason, $0.attempts) })
    }

    /// Every outcome of `app` but the pending ones (nothing was answered) summed by counter key: what the delivery
    /// counters count, whatever the delivery log keeps.
    static func tally(app: String, _ outcomes: [DeliveryOutcome]) -> Tally {
        tally(outcomes.indices.lazy.filter { outcomes[$0].kind != .pending }.map {
            (app, outcomes[$0].service, outcomes[$0].status, outcomes[$0].reason, outcomes[$0].attempts)
        })
    }

    private static func tally<S: Sequence>(_ items: S) -> Tally where S.Element == (String, PushService, Int, String?, Int) {
        var sums: [Key: (count: Int, retries: Int)] = [:]
        // Runs of one key (a broadcast's batch is mostly 200s) are summed before touching the dictionary.
        var run: (key: Key, count: Int, retries: Int)?
        for (app, service, status, reason, attempts) in items {
            let label = APNsReason.label(status: status, reason: reason)
            if let r = run, r.key.status == status, r.key.reason == label, r.key.service == service, r.key.app == app {
                run = (r.key, r.count + 1, r.retries + max(0, attempts - 1))
                continue
            }
            if let r = run {
                let old = sums[r.key] ?? (0, 0)
                sums[r.key] = (old.count + r.count, old.retries + r.retries)
            }
            run = (Key(app: app, service: service, status: status, reason: label), 1, max(0, attempts - 1))
        }
        if let r = run {
            let old = sums[r.key] ?? (0, 0)
            sums[r.key] = (old.count + r.count, old.retries + r.retries)
        }
        return sums.sorted {
            ($0.key.app, $0.key.service.rawValue, $0.key.status, $0.key.reason) < ($1.key.app, $1.key.service.rawValue, $1.key.status, $1.key.reason)
        }
            .map { (key: $0.key, value: $0.value) }
    }
}
