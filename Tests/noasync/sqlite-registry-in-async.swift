// Must NOT compile: async code calling the blocking API of the concrete SQLite backend (not through the protocol),
// as a test once did with `SQLiteRegistry.broadcast(id:)`.
import PushCore
import PushStore

func record(_ registry: SQLiteRegistry, id: String) async throws -> BroadcastRecord? {
    try registry.broadcast(id: id)
}
