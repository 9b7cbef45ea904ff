import PushCore

extension Registry {
    /// Takes `app`'s broadcast lease for `owner` until now + `ttlMs`, under a new fence (fences only grow:
    /// the row is released, never deleted). A lease held by another owner is taken over only when it has
    /// expired or `ownerIsDead` says its process is gone (a crashed cron run blocks nobody for long).
    public func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: (String) -> Bool = { _ in false }
    ) throws(StoreError) -> LeaseResult {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> LeaseResult in
            let select = try db.statement("SELECT broadcast_id, owner, expires_ms, fence FROM broadcast_leases WHERE app = ?1")
            try select.bind(1, app)
            var fence: Int64 = 0
            if try select.step() {
                let (heldBy, holder, expires) = (select.text(0), select.text(1), select.int64(2))
                fence = select.int64(3)
                select.reset()
                if !holder.isEmpty && holder != owner && expires > now && !ownerIsDead(holder) {
                    return .held(broadcastId: heldBy)
                }
            }
            select.reset()
            let upsert = try db.statement("""
                INSERT INTO broadcast_leases (app, broadcast_id, owner, expires_ms, fence) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (app) DO UPDATE SET broadcast_id = ?2, owner = ?3, expires_ms = ?4, fence = ?5
                """)
            try upsert.bind(1, app)
            try upsert.bind(2, broadcastId)
            try upsert.bind(3, owner)
            try upsert.bind(4, now + ttlMs)
            try upsert.bind(5, fence + 1)
            try upsert.run()
            return .acquired(fence: fence + 1)
        }
    }

    /// Extends the lease held under `fence` (the heartbeat). Returns false when another owner has taken it.
    public func renewLease(app: String, fence: Int64, ttlMs: Int64) throws(StoreError) -> Bool {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> Bool in
            let update = try db.statement(
                "UPDATE broadcast_leases SET expires_ms = ?3 WHERE app = ?1 AND fence = ?2 AND owner <> ''")
            try update.bind(1, app)
            try update.bind(2, fence)
            try update.bind(3, now + ttlMs)
            try update.run()
            return db.changes == 1
        }
    }

    /// Gives the lease up, if `fence` still holds it.
    public func releaseLease(app: String, fence: Int64) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let release = try db.statement(
                "UPDATE broadcast_leases SET owner = '', expires_ms = 0 WHERE app = ?1 AND fence = ?2")
            try release.bind(1, app)
            try release.bind(2, fence)
            try release.run()
        }
    }

    /// Inside a write transaction: throws `.leaseLost` unless `fence` is still `app`'s current lease.
    static func requireLease(app: String, fence: Int64, in db: Connection) throws(StoreError) {
        let select = try db.statement("SELECT 1 FROM broadcast_leases WHERE app = ?1 AND fence = ?2 AND owner <> ''")
        defer { select.reset() }
        try select.bind(1, app)
        try select.bind(2, fence)
        guard try select.step() else {
            throw StoreError(.leaseLost, "the \(app) broadcast lease (fence \(fence)) was taken over by another process")
        }
    }
}
