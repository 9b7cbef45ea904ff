import APNsSimulator
import Foundation
import PushCore
import PushSender
import PushStore

/// A real registry file, the dev PKI from `DevCertificates` (the committed generator), and the real
/// simulator on a loopback port with client-certificate auth.
struct BroadcastFixture {
    let dir: String
    let registry: Registry
    let simulator: APNsSimulator
    let config: PushConfiguration
    let settings: AppSettings

    static func start() async throws -> BroadcastFixture {
        let dir = NSTemporaryDirectory() + "broadcast-" + UUID().uuidString
        let certs = dir + "/certs"
        try DevCertificates.make(in: certs, options: .init(topic: "com.example.app"))
        let pem = try SimulatorConfiguration.pemFiles(in: certs)
        let simulator = try APNsSimulator(configuration: SimulatorConfiguration(
            host: "127.0.0.1", port: 0, caPEM: pem.ca, serverCertificatePEM: pem.certificate,
            serverKeyPEM: pem.key, receivedLimit: 100_000))
        let port = try await simulator.start()
        let settings = AppSettings(
            topic: "com.example.app", endpoint: .simulator,
            auth: .certificate(p12: certs + "/client.p12", password: .file(certs + "/client.p12.password")))
        let config = PushConfiguration(
            database: dir + "/registry.sqlite",
            simulator: SimulatorSettings(host: "127.0.0.1", port: port, certificates: certs),
            apps: ["example": settings])
        return BroadcastFixture(
            dir: dir, registry: try Registry(path: config.database), simulator: simulator, config: config,
            settings: settings)
    }

    func stop() async throws {
        try await simulator.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    func makeSender(_ sink: DeliverySink) throws -> Sender {
        try makeSender(sink, window: 2000)
    }

    /// A sender with a small window, so a stop lands while most devices are still to come.
    func makeSender(_ sink: DeliverySink, window: Int) throws -> Sender {
        try Sender(
            app: settings, simulator: config.simulator, credentials: try makeCredentials(for: settings),
            configuration: SenderConfiguration(window: window), sink: sink)
    }

    /// Registers `count` distinct tokens (optionally in a channel) and returns them in key order.
    @discardableResult
    func seed(_ count: Int, prefix: String = "aa", channels: [String]? = nil) throws -> [DeviceToken] {
        var tokens: [DeviceToken] = []
        for i in 0..<count {
            let digits = String(i, radix: 16)
            tokens.append(try DeviceToken(parsing: prefix + String(repeating: "0", count: 62 - digits.count) + digits))
        }
        let results = registry.registerBatch(tokens.map {
            RegistrationRequest(app: "example", token: $0, channels: channels, environment: .development)
        })
        for r in results { _ = try r.get() }
        return tokens.sorted()
    }

    /// Creates a broadcast record for an alert.
    func create(id: String, channel: String? = nil) throws -> BroadcastRecord {
        let prepared = try Payload(aps: APS(alert: .text("Daily digest"))).prepare()
        let record = BroadcastRecord(
            id: id, app: "example", payload: prepared.payload, pushType: prepared.pushType,
            priority: prepared.priority, channel: channel)
        try registry.createBroadcast(record)
        return record
    }
}
