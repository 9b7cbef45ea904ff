extension Registry {
    /// Takes `app`'s broadcast lease for `owner` until now + `ttlMs`. A lease held by another owner is
    /// taken over only when it has expired or `ownerIsDead` says its process is gone (a crashed cron run
    /// leaves no lock file behind and blocks nobody for long).
    public func acquireLease(
        app: String, broadcastId: String, owner: String, ttlMs: Int64, ownerIsDead: (String) -> Bool = { _ in false }
    ) throws(StoreError) -> LeaseResult {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> LeaseResult in
            let select = try db.statement("SELECT broadcast_id, owner, expires_ms FROM broadcast_leases WHERE app = ?1")
            try select.bind(1, app)
            if try select.step() {
                let (heldBy, holder, expires) = (select.text(0), select.text(1), select.int64(2))
                select.reset()
                if holder != owner && expires > now && !ownerIsDead(holder) { return .held(broadcastId: heldBy) }
            }
            select.reset()
            let upsert = try db.statement("""
                INSERT INTO broadcast_leases (app, broadcast_id, owner, expires_ms) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (app) DO UPDATE SET broadcast_id = ?2, owner = ?3, expires_ms = ?4
                """)
            try upsert.bind(1, app)
            try upsert.bind(2, broadcastId)
            try upsert.bind(3, owner)
            try upsert.bind(4, now + ttlMs)
            try upsert.run()
            return .acquired
        }
    }

    /// Extends the lease (the heartbeat). Returns false when `owner` no longer holds it.
    public func renewLease(app: String, owner: String, ttlMs: Int64) throws(StoreError) -> Bool {
        let now = nowMs()
        return try write { (db) throws(StoreError) -> Bool in
            let update = try db.statement("UPDATE broadcast_leases SET expires_ms = ?3 WHERE app = ?1 AND owner = ?2")
            try update.bind(1, app)
            try update.bind(2, owner)
            try update.bind(3, now + ttlMs)
            try update.run()
            return db.changes == 1
        }
    }

    /// Gives the lease up, if `owner` holds it.
    public func releaseLease(app: String, owner: String) throws(StoreError) {
        try write { (db) throws(StoreError) in
            let delete = try db.statement("DELETE FROM broadcast_leases WHERE app = ?1 AND owner = ?2")
            try delete.bind(1, app)
            try delete.bind(2, owner)
            try delete.run()
        }
    }
}
