import PushCore

/// Delivery outcomes counted by app, HTTP status and reason (for `/metrics`).
public struct DeliveryCount: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// The HTTP status (0 = no answer from APNs).
    public var status: Int
    /// Apple's reason, if any.
    public var reason: String?
    /// How many notifications ended this way.
    public var count: Int
    /// Attempts beyond the first those notifications took (resends after transient failures).
    public var retries: Int = 0

    /// Creates a count.
    public init(app: String, status: Int, reason: String?, count: Int, retries: Int = 0) {
        self.app = app
        self.status = status
        self.reason = reason
        self.count = count
        self.retries = retries
    }

    /// The counter key of a delivery: app, status and bounded reason (see ``APNsReason/label(status:reason:)``).
    struct Key: Hashable {
        var app: String
        var status: Int
        var reason: String
    }

    /// Sums by counter key.
    typealias Tally = [(key: Key, value: (count: Int, retries: Int))]

    /// `records` summed by counter key.
    static func tally(_ records: [DeliveryRecord]) -> Tally {
        tally(records.lazy.map { ($0.app, $0.status, $0.reason, $0.attempts) })
    }

    /// Every outcome of `app` but the pending ones (nothing was answered) summed by counter key: what the delivery
    /// counters count, whatever the delivery log keeps.
    static func tally(app: String, _ outcomes: [DeliveryOutcome]) -> Tally {
        tally(outcomes.lazy.filter { $0.kind != .pending }.map { (app, $0.status, $0.reason, $0.attempts) })
    }

    private static func tally<S: Sequence>(_ items: S) -> Tally where S.Element == (String, Int, String?, Int) {
        var sums: [Key: (count: Int, retries: Int)] = [:]
        // Runs of one key (a broadcast's batch is mostly 200s) are summed before touching the dictionary.
        var run: (key: Key, count: Int, retries: Int)?
        for (app, status, reason, attempts) in items {
            let label = APNsReason.label(status: status, reason: reason)
            if let r = run, r.key.status == status, r.key.reason == label, r.key.app == app {
                run = (r.key, r.count + 1, r.retries + max(0, attempts - 1))
                continue
            }
            if let r = run {
                let old = sums[r.key] ?? (0, 0)
                sums[r.key] = (old.count + r.count, old.retries + r.retries)
            }
            run = (Key(app: app, status: status, reason: label), 1, max(0, attempts - 1))
        }
        if let r = run {
            let old = sums[r.key] ?? (0, 0)
            sums[r.key] = (old.count + r.count, old.retries + r.retries)
        }
        return sums.sorted { ($0.key.app, $0.key.status, $0.key.reason) < ($1.key.app, $1.key.status, $1.key.reason) }
            .map { (key: $0.key, value: $0.value) }
    }
}

/// Prunes counted by app, reason and what was done (`deleted` or `skipped`).
public struct PruneCount: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// Apple's reason.
    public var reason: String
    /// `deleted`, or `skipped` because the device registered again after APNs' timestamp.
    public var outcome: String
    /// How many.
    public var count: Int
}

extension SQLiteRegistry {
    /// One device, or nil when `token` is not registered for `app`.
    public func device(app: String, token: DeviceToken) throws(StoreError) -> RegisteredDevice? {
        try read { (db) throws(StoreError) -> RegisteredDevice? in
            let select = try db.statement("""
                SELECT token, environment, channels, created_ms, last_registered_ms, last_success_ms
                FROM devices WHERE app = ?1 AND token = ?2
                """)
            defer { select.reset() }
            try select.bind(1, app)
            try select.bind(2, token.hex)
            return try select.step() ? try SQLiteRegistry.device(from: select) : nil
        }
    }

    /// Final delivery outcomes grouped by app, status and reason.
    public func deliveryCounts() throws(StoreError) -> [DeliveryCount] {
        try read { (db) throws(StoreError) -> [DeliveryCount] in
            let select = try db.statement("""
                SELECT app, status, reason, count, retries FROM delivery_counters ORDER BY 1, 2, 3
                """)
            defer { select.reset() }
            var out: [DeliveryCount] = []
            while try select.step() {
                let reason = select.text(2)
                out.append(DeliveryCount(
                    app: select.text(0), status: Int(select.int64(1)), reason: reason.isEmpty ? nil : reason,
                    count: Int(select.int64(3)), retries: Int(select.int64(4))))
            }
            return out
        }
    }

    /// Prune-log entries grouped by app, reason and action.
    public func pruneCounts() throws(StoreError) -> [PruneCount] {
        try read { (db) throws(StoreError) -> [PruneCount] in
            let select = try db.statement("SELECT app, reason, action, count FROM prune_counters ORDER BY 1, 2, 3")
            defer { select.reset() }
            var out: [PruneCount] = []
            while try select.step() {
                out.append(PruneCount(app: select.text(0), reason: select.text(1), outcome: select.text(2), count: Int(select.int64(3))))
            }
            return out
        }
    }
}

extension SQLiteRegistry {
    /// Why `name` is not a valid channel name, or nil when it is (the rule registrations apply).
    public static func channelNameProblem(_ name: String) -> String? {
        do {
            try Channels.validate(name)
            return nil
        } catch {
            return error.message
        }
    }
}
