// Must NOT compile: async code calling the blocking API of the concrete PostgreSQL backend (not through the
// protocol).
import PushCore
import PushStore

func lookUp(_ registry: PostgresRegistry, app: String, token: DeviceToken) async throws -> RegisteredDevice? {
    try registry.device(app: app, token: token)
}
