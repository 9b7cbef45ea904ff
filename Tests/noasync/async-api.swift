// Must compile: the same calls through the async store API, and the blocking API from synchronous code.
import PushCore
import PushStore

func lookUp(_ registry: any RegistryStore, app: String, token: DeviceToken) async throws -> RegisteredDevice? {
    try await registry.run { try $0.device(app: app, token: token) }
}

func claim(_ store: any DeliveryStore) async -> BroadcastShard?? {
    await store.perform { try? store.claimShard(broadcastId: nil, apps: nil, owner: "w", ttlMs: 1000, ownerIsDead: { _ in false }) }
}

func lookUpBlocking(_ registry: any RegistryStore, app: String, token: DeviceToken) throws -> RegisteredDevice? {
    try registry.device(app: app, token: token)
}

func record(_ registry: SQLiteRegistry, id: String) async throws -> BroadcastRecord? {
    try await registry.run { _ in try registry.broadcast(id: id) }
}

func lookUp(_ registry: PostgresRegistry, app: String, token: DeviceToken) async throws -> RegisteredDevice? {
    try await registry.run { _ in try registry.device(app: app, token: token) }
}

func recordBlocking(_ registry: SQLiteRegistry, id: String) throws -> BroadcastRecord? {
    try registry.broadcast(id: id)
}
