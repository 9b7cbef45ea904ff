// Must NOT compile: a request handler (async) calling the blocking registry API directly.
import PushCore
import PushStore

func lookUp(_ registry: any RegistryStore, app: String, token: DeviceToken) async throws -> RegisteredDevice? {
    try registry.device(app: app, token: token)
}
