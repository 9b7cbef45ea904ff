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

    /// The processes (`host:pid`, in shard order) holding live claims on shards of broadcast `id`, other than this
    /// one (``ShardLease``: an expired claim is not waited for, it is taken over).
    func holders(of id: String, access: StoreAccess) async -> [String]? {
        let me = configuration.owner
        return try? await access.run("reading the shards", retry: false, { store throws(DeliveryStoreError) in
            try store.holders(of: id, except: me)
        })
    }
}
