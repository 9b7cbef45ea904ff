import PushCore

extension DeliveryStore {
    /// For async tests, which may not call the blocking store API directly (it is `noasync`): `body` on the store's
    /// own thread pool (``DeliveryStore/perform(_:)``), its error rethrown.
    public func onPool<T: Sendable>(_ body: @escaping @Sendable (any DeliveryStore) throws -> T) async throws -> T {
        guard let result = await perform({ Result { try body(self) } }) else {
            throw StoreError(.unavailable, "no store thread was free in time")
        }
        return try result.get()
    }
}

/// For async tests only: runs `body` — blocking store calls, e.g. one that streams into local state — right here, on
/// the test's own thread. Production code goes through the store's executor instead (`run { }`, `perform { }`).
public func blocking<T>(_ body: () throws -> T) rethrows -> T { try body() }
