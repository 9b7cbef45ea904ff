// Must NOT compile: engine code (async) calling the blocking delivery store directly.
import PushCore

func claim(_ store: any DeliveryStore) async throws -> BroadcastShard? {
    try store.claimShard(broadcastId: nil, apps: nil, owner: "w", ttlMs: 1000, ownerIsDead: { _ in false })
}
