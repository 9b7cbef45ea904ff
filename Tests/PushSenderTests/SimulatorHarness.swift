import PushSimulator
import Foundation
import NIOPosix
import PushCore
import PushSender

/// A real PushSimulator over TLS on 127.0.0.1:0 with its own PKI written to a temp dir.
struct SimulatorHarness {
    let pki: SimulatorPKI
    let simulator: PushSimulator
    let port: Int
    let dir: String
    /// Our own event loop, so heavy sender tests do not delay other suites' simulators on NIO's shared group.
    let group: MultiThreadedEventLoopGroup

    /// Starts a simulator. With `dev`, it serves the make-dev PKI (its CA, server certificate and keys)
    /// so the .p12/.p8 files from ``DevCertificates`` work against it.
    init(
        faults: SimulatorFaults = .init(), devices: [DeviceToken: DeviceBehaviour] = [:],
        clientAuth: SimulatorConfiguration.ClientAuth = .certificate, jwtKeys: [SimulatorJWTKey] = [],
        receivedLimit: Int = 10_000, dev: DevCertificates? = nil,
        clock: @escaping @Sendable () -> Int64 = SimulatorClock.systemMilliseconds, accessTokenLifetime: Int64 = 3599,
        fcmForeignTokens: Set<String> = []
    ) async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        pki = try SimulatorPKI()
        dir = NSTemporaryDirectory() + "pushsender-sim-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        func read(_ name: String) throws -> String { try String(contentsOfFile: dev!.path(name), encoding: .utf8) }
        let caPEM = try dev.map { _ in try read("ca.pem") } ?? pki.ca.certificatePEM
        try caPEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        var config = SimulatorConfiguration(
            caPEM: caPEM, serverCertificatePEM: try dev.map { _ in try read("server.pem") } ?? pki.server.certificatePEM,
            serverKeyPEM: try dev.map { _ in try read("server.key") } ?? pki.server.keyPEM, clientAuth: clientAuth,
            jwtKeys: jwtKeys, receivedLimit: receivedLimit, faults: faults, devices: devices, clock: clock,
            eventLoopGroup: group)
        config.accessTokenLifetime = accessTokenLifetime
        config.fcmForeignTokens = fcmForeignTokens
        simulator = try PushSimulator(configuration: config)
        port = try await simulator.start()
    }

    /// The CA file that trusts this simulator.
    var caFile: String { dir + "/ca.pem" }

    /// A target for this simulator.
    func target(host: String = "127.0.0.1", caFile: String? = nil, address: String? = nil) -> SenderTarget {
        SenderTarget(host: host, port: port, caFile: caFile ?? self.caFile, address: address)
    }

    /// A client identity issued by the simulator's CA.
    func clientIdentity(topics: [String]? = nil) throws -> TLSIdentity {
        let id = try pki.client(uid: topic, environment: .development, topics: topics)
        return TLSIdentity(certificatePEM: Array(id.certificatePEM.utf8), privateKeyPEM: Array(id.keyPEM.utf8))
    }

    let topic = "com.example.app"

    /// A request to `token` with a small alert payload.
    func request(_ token: DeviceToken, notificationId: String = NotificationID.random()) -> NotificationRequest {
        NotificationRequest(
            token: token, topic: topic, pushType: .alert, priority: .immediate, notificationId: notificationId,
            payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8))
    }

    func stop() async {
        try? await simulator.stop()
        try? await group.shutdownGracefully()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// Deterministic distinct tokens: 32 bytes from an index.
func testToken(_ i: Int, salt: UInt8 = 0) -> DeviceToken {
    var bytes = [UInt8](repeating: salt, count: 32)
    withUnsafeBytes(of: UInt64(i).bigEndian) { for (k, b) in $0.enumerated() { bytes[24 + k] = b } }
    return try! DeviceToken(bytes: bytes)
}

