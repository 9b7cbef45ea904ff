import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import PushServer
import PushStore

/// A real server on a loopback port with a real SQLite registry in a temp directory (or the given store).
struct TestServer {
    static let registrationKey = "reg-key-example"
    static let sendKey = "send-key-example"
    static let otherSendKey = "send-key-other"

    let running: RunningServer
    let store: any RegistryStore
    /// The SQLite registry of a server started without a store.
    var registry: SQLiteRegistry { store as! SQLiteRegistry }
    let directory: URL
    var base: String { "http://127.0.0.1:\(running.port)" }
    /// The admin listener (the same as ``base`` unless started with `adminListener`).
    var adminBase: String { "http://127.0.0.1:\(running.adminPort)" }

    /// `credentials` replaces the example app's loaded certificate (300 days left); `now` is the server's clock.
    /// One listener serves everything unless `adminListener`: then the public listener (``base``) serves the API
    /// and `/healthz`, and a second one (``adminBase``) everything. `webPush` gives the example app Web Push.
    static func start(
        rate: Double = 10_000, burst: Double = 10_000, store: (any RegistryStore)? = nil,
        credentials: [String: PushServer.CredentialStatus]? = nil, now: @escaping @Sendable () -> Date = { Date() },
        healthWarningDays: Int? = nil, adminListener: Bool = false, webPush: WebPushSettings? = nil, fcm: FCMSettings? = nil,
        hms: HMSSettings? = nil, unifiedPush: UnifiedPushSettings? = nil, harmonyos: HarmonyOSSettings? = nil,
        loadServiceHealth: Bool = false
    ) async throws -> TestServer {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushserver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let auth = AuthSettings.certificate(p12: "/nonexistent.p12", password: .environment("UNUSED"))
        var config = PushConfiguration(
            database: dir.appendingPathComponent("registry.sqlite").path,
            server: ServerSettings(host: "127.0.0.1", port: 0, rateLimitPerSecond: rate, rateLimitBurst: burst),
            simulator: SimulatorSettings(certificates: dir.path),
            apps: [
                "example": AppSettings(
                    topic: "com.example.app", endpoint: .simulator, auth: auth,
                    registrationKeys: [APIKeys.hash(registrationKey)], sendKeys: [APIKeys.hash(sendKey)]),
                "other": AppSettings(
                    topic: "com.example.other", endpoint: .production, auth: auth,
                    sendKeys: [APIKeys.hash(otherSendKey)]),
            ])
        if let healthWarningDays { config.healthWarningDays = healthWarningDays }
        config.apps["example"]?.webPush = webPush
        config.apps["example"]?.fcm = fcm
        config.apps["example"]?.hms = hms
        config.apps["example"]?.harmonyos = harmonyos
        config.apps["example"]?.unifiedPush = unifiedPush
        let registry = try store ?? SQLiteRegistry(path: config.database)
        let server = PushServer(
            configuration: config, registry: registry, keys: APIKeys(apps: config.apps),
            credentials: credentials ?? ["example": .init(loaded: true, kind: "certificate", daysLeft: 300)],
            services: loadServiceHealth
                ? Dictionary(uniqueKeysWithValues: config.apps.map { ($0.key, ServiceHealth.loading(app: $0.key, $0.value)) }) : [:],
            now: now)
        let running = try await server.start(
            host: "127.0.0.1", port: 0, admin: adminListener ? ListenAddress(host: "127.0.0.1", port: 0) : nil)
        return TestServer(running: running, store: registry, directory: dir)
    }

    func stop() async throws {
        try await running.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    struct Reply {
        let status: Int
        let body: Data
        let headers: [String: String]
        var json: JSONValue? { try? JSONValue(parsing: Array(body)) }
        var errorCode: String? { json?["error"]?["code"]?.stringValue }
    }

    /// One HTTP/1.1 request over a real socket, to the public listener (``base``) or the admin one, through
    /// `session` (the shared one allows 6 connections to a host: a test with more requests in flight brings its own).
    func request(
        _ method: String, _ path: String, key: String? = nil, contentType: String? = nil, body: String? = nil,
        admin: Bool = false, session: URLSession = .shared
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: (admin ? adminBase : base) + path)!)
        request.httpMethod = method
        request.timeoutInterval = 20
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        if let body { request.httpBody = Data(body.utf8) }
        let (data, http) = try await session.answer(for: request)
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields { headers[String(describing: k).lowercased()] = String(describing: v) }
        return Reply(status: http.statusCode, body: data, headers: headers)
    }
}
