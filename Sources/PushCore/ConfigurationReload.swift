/// What a reload (SIGHUP to `pushctl serve` or `pushctl worker`) applies of a newly read configuration.
///
/// The rule: everything a request or a new sender reads when it starts changes live (API keys, apps added or
/// changed — topic, endpoint, credentials, proxy, limits —, `userSecret`, `healthWarningDays`, the global
/// `proxy`); what the process bound or built once at start cannot (listen addresses, the database, the built-in
/// simulator, the rate limiter, the delivery engine's shard and history settings, the webhook dispatcher). A
/// change to one of those is *refused by name and the rest still applies*, rather than refusing the whole reload:
/// the common reason to reload is a new key or a renewed certificate, and an unrelated edit waiting for the next
/// restart (say, a new port written ahead of a planned restart) must not hold that back. The refused keys keep
/// their running values, so the process never runs half of a change it cannot make.
public struct ConfigurationReload: Sendable, Equatable {
    /// The configuration to run with from now on: the new one with every refused key's running value.
    public let applied: PushConfiguration
    /// The keys whose change needs a restart (`server.port`, `apps.ID.webhook`, …), sorted; empty when none.
    public let refused: [String]

    /// Compares the running configuration with the newly read one. `listening` is false for a process that
    /// opens no listener (`pushctl worker`): it ignores `server.*` rather than refusing a change it never uses.
    public init(running: PushConfiguration, new: PushConfiguration, listening: Bool = true) {
        var applied = new
        var refused: [String] = []
        func keep<Value: Equatable>(_ key: String, _ path: WritableKeyPath<PushConfiguration, Value>) {
            guard running[keyPath: path] != new[keyPath: path] else { return }
            refused.append(key)
            applied[keyPath: path] = running[keyPath: path]
        }
        keep("database", \.database)
        keep("databasePasswordFile", \.databasePasswordFile)
        keep("databasePasswordEnv", \.databasePasswordEnv)
        if listening {
            keep("server.host", \.server.host)
            keep("server.port", \.server.port)
            keep("server.admin", \.server.admin)
            keep("server.rateLimitPerSecond", \.server.rateLimitPerSecond)
            keep("server.rateLimitBurst", \.server.rateLimitBurst)
        } else {
            applied.server = running.server
        }
        keep("simulator", \.simulator)
        keep("shardSize", \.shardSize)
        keep("shardLeaseSeconds", \.shardLeaseSeconds)
        keep("databaseOutageLimitSeconds", \.databaseOutageLimitSeconds)
        keep("deliveryRetentionDays", \.deliveryRetentionDays)
        keep("deliveryLog", \.deliveryLog)
        // Per app, the settings the engine and the webhook dispatcher took at start (an app added with a webhook
        // runs without it until a restart, and says so).
        for id in new.apps.keys.sorted() {
            let before = running.apps[id]
            if new.apps[id]?.webhook != before?.webhook {
                refused.append("apps.\(id).webhook")
                applied.apps[id]?.webhook = before?.webhook
            }
            if new.apps[id]?.deliveryLog != before?.deliveryLog {
                refused.append("apps.\(id).deliveryLog")
                applied.apps[id]?.deliveryLog = before?.deliveryLog
            }
        }
        self.applied = applied
        self.refused = refused.sorted()
    }

    /// The one log line for refused keys, or nil when none was refused.
    public var refusalLine: String? {
        guard !refused.isEmpty else { return nil }
        return "configuration reload: kept the running value of \(refused.joined(separator: ", ")) (changing "
            + "\(refused.count == 1 ? "it needs" : "them needs") a restart); everything else was applied"
    }
}
