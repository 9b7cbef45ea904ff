import PushCore
import Testing

/// What a SIGHUP applies of a newly read configuration, and what it keeps for a restart.
@Suite struct ConfigurationReloadTests {
    static func config(port: Int = 8080, keys: [String] = [], webhook: Bool = false, shardSize: Int? = nil) throws -> PushConfiguration {
        let hashes = keys.map { "\"sha256:\(String(repeating: $0, count: 64))\"" }.joined(separator: ", ")
        let hook = webhook ? #", "webhook": {"url": "https://hooks.example.com/x", "secretFile": "hook.secret"}"# : ""
        let json = """
            {"database": "registry.sqlite", "server": {"port": \(port)},\(shardSize.map { " \"shardSize\": \($0)," } ?? "")
             "simulator": {"certificates": "certs"},
             "apps": {"example": {"topic": "com.example.app", "endpoint": "simulator", "sendKeys": [\(hashes)],
                                  "auth": {"p8": "k.p8", "keyId": "ABCDEFGHIJ", "teamId": "TEAM123456"}\(hook)}}}
            """
        return try PushConfiguration(json: Array(json.utf8), baseDirectory: "/etc/pushprovider", zones: .foundation())
    }

    @Test func keysApplyAndAChangedPortIsKeptAndNamed() throws {
        let running = try Self.config(keys: ["a"])
        let reload = ConfigurationReload(running: running, new: try Self.config(port: 9090, keys: ["a", "b"]))
        #expect(reload.refused == ["server.port"])
        #expect(reload.applied.server.port == 8080)
        #expect(reload.applied.apps["example"]?.sendKeys.count == 2)
        #expect(reload.refusalLine?.contains("kept the running value of server.port (changing it needs a restart)") == true)
    }

    @Test func aWorkerIgnoresServerSettingsButNotEngineOnes() throws {
        let running = try Self.config()
        let reload = ConfigurationReload(
            running: running, new: try Self.config(port: 9090, webhook: true, shardSize: 500), listening: false)
        #expect(reload.refused == ["apps.example.webhook", "shardSize"])
        #expect(reload.applied.apps["example"]?.webhook == nil)
        #expect(reload.applied.shardSize == running.shardSize)
        #expect(reload.applied.server == running.server)
    }

    @Test func nothingChangedRefusesNothing() throws {
        let reload = ConfigurationReload(running: try Self.config(keys: ["a"]), new: try Self.config(keys: ["a"]))
        #expect(reload.refused.isEmpty && reload.refusalLine == nil)
    }
}
