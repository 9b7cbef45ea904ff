import PushCore

extension SQLiteRegistry {
    /// The persisted pruning-breaker state of `app`'s endpoints, keyed by endpoint URL.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func breakerStates(app: String) throws(StoreError) -> [String: PruningBreaker.State] {
        try read { (db) throws(StoreError) -> [String: PruningBreaker.State] in
            let select = try db.statement(
                "SELECT endpoint, answers, bad_device_tokens, consecutive, tripped FROM pruning_breakers WHERE app = ?1")
            defer { select.reset() }
            try select.bind(1, app)
            var states: [String: PruningBreaker.State] = [:]
            while try select.step() {
                states[select.text(0)] = PruningBreaker.State(
                    answers: Int(select.int64(1)), badDeviceTokens: Int(select.int64(2)),
                    consecutive: Int(select.int64(3)), tripped: select.int64(4) != 0)
            }
            return states
        }
    }

    /// Stores the pruning-breaker state of `app`'s endpoints.
    @available(*, noasync, message: "blocks on the database: use run { } (the store executor) from async code")
    public func saveBreakerStates(app: String, _ states: [String: PruningBreaker.State]) throws(StoreError) {
        guard !states.isEmpty else { return }
        let now = nowMs()
        try write { (db) throws(StoreError) in
            let upsert = try db.statement("""
                INSERT INTO pruning_breakers (app, endpoint, answers, bad_device_tokens, consecutive, tripped, updated_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (app, endpoint) DO UPDATE SET answers = ?3, bad_device_tokens = ?4, consecutive = ?5,
                    tripped = ?6, updated_ms = ?7
                """)
            for (endpoint, state) in states.sorted(by: { $0.key < $1.key }) {
                try upsert.bind(1, app)
                try upsert.bind(2, endpoint)
                try upsert.bind(3, Int64(state.answers))
                try upsert.bind(4, Int64(state.badDeviceTokens))
                try upsert.bind(5, Int64(state.consecutive))
                try upsert.bind(6, Int64(state.tripped ? 1 : 0))
                try upsert.bind(7, now)
                try upsert.run()
            }
        }
    }
}
