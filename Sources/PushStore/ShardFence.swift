import PushCore

/// The fence rule's error, once for both backends: a claim's write that found another fence on its shard was taken
/// over, and writes nothing (`.leaseLost`).
enum ShardFence {
    /// The error for a write under `fence` to shard `index` of broadcast `id` after another owner took the shard.
    static func lost(id: String, index: Int, fence: Int64) -> StoreError {
        StoreError(.leaseLost, "shard \(index) of broadcast \(id) (fence \(fence)) was taken over by another worker")
    }
}
