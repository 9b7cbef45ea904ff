import PushCore

extension Broadcaster {
    /// Outcomes committed for broadcast `id` by processes other than this one (`configuration.owner`), over all
    /// runs: the claim log's per-worker counts, a few rows per shard.
    func committedByOthers(id: String, access: StoreAccess) async -> Int? {
        let me = configuration.owner
        let workers = try? await access.run("reading the workers", retry: false) { store throws(DeliveryStoreError) in
            try store.workers(id: id)
        }
        return workers.map { $0.filter { $0.key != me }.values.reduce(0, +) }
    }

    /// The processes (`host:pid`, in shard order) holding shards of broadcast `id` other than this one.
    func holders(of id: String, access: StoreAccess) async -> [String]? {
        let me = configuration.owner
        guard let shards = try? await access.run("reading the shards", retry: false, { store throws(DeliveryStoreError) in
            try store.shards(id: id)
        }) else { return nil }
        var seen: [String] = []
        for shard in shards where shard.state == .claimed && shard.owner != me {
            let name = Self.processName(shard.owner)
            if !seen.contains(name) { seen.append(name) }
        }
        return seen
    }

    /// `host:pid` of a worker id (`host:pid:nonce`): how progress lines and messages name a process.
    public static func processName(_ owner: String) -> String {
        let parts = owner.split(separator: ":")
        return parts.count == 3 ? "\(parts[0]):\(parts[1])" : owner
    }
}
