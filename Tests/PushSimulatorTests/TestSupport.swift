import PushSimulator
import Crypto
import Foundation
import NIOPosix
import PushCore

/// A running simulator with its PKI; `run` stops it whatever the test does.
struct SimulatorFixture: Sendable {
    let pki: SimulatorPKI
    let simulator: PushSimulator
    let port: Int
    /// A development client certificate for `com.example.app`.
    let client: SimulatorPKI.Identity

    static let topic = "com.example.app"

    static func run<T>(
        _ clientAuth: SimulatorConfiguration.ClientAuth = .certificate,
        configure: (inout SimulatorConfiguration) -> Void = { _ in },
        _ body: (SimulatorFixture) async throws -> T
    ) async throws -> T {
        let pki = try SimulatorPKI()
        var configuration = SimulatorConfiguration(
            caPEM: pki.ca.certificatePEM, serverCertificatePEM: pki.server.certificatePEM,
            serverKeyPEM: pki.server.keyPEM, clientAuth: clientAuth)
        configure(&configuration)
        let simulator = try PushSimulator(configuration: configuration)
        let port = try await simulator.start()
        let fixture = SimulatorFixture(
            pki: pki, simulator: simulator, port: port, client: try pki.client(uid: topic))
        do {
            let result = try await body(fixture)
            try await simulator.stop()
            return result
        } catch {
            try? await simulator.stop()
            throw error
        }
    }

    /// Connects with the default client certificate in certificate mode, none otherwise, on the simulator's event
    /// loop group when it has its own (``SimulatorConfiguration/eventLoopGroup``), else NIO's shared one.
    func connect(identity: SimulatorPKI.Identity? = nil, alpn: [String] = ["h2"], firstBurst: [H2TestClient.Request]? = nil) async throws -> H2TestClient {
        let id = identity ?? (simulator.configuration.clientAuth == .certificate ? client : nil)
        return try await H2TestClient.connect(
            port: port, caPEM: pki.ca.certificatePEM, identity: id, alpn: alpn,
            group: simulator.configuration.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton, firstBurst: firstBurst)
    }
}

/// A 32-byte token in lowercase hex.
func hexToken(_ seed: UInt8 = 0xab) -> String {
    (0..<32).map { i in String(format: "%02x", seed &+ UInt8(i)) }.joined()
}

/// A well-formed notification for `SimulatorFixture.topic`, with headers to add or replace.
func notification(
    token: String = hexToken(), headers: [(String, String)] = [("apns-topic", SimulatorFixture.topic)],
    body: String = #"{"aps":{"alert":"hi"}}"#, method: String = "POST", path: String? = nil
) -> H2TestClient.Request {
    H2TestClient.Request(method: method, path: path ?? "/3/device/\(token)", headers: headers, body: Array(body.utf8))
}

/// The `reason` (and `timestamp`) of an error body, parsed as JSON.
func reasonOf(_ response: H2TestClient.Response) -> String? {
    (try? JSONValue(parsing: response.body))?["reason"]?.stringValue
}

/// An ES256 provider token as APNs expects it.
func providerToken(key: P256.Signing.PrivateKey, keyId: String, teamId: String, issuedAt: Int64) throws -> String {
    func b64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    let header = b64(Array(#"{"alg":"ES256","kid":"\#(keyId)"}"#.utf8))
    let claims = b64(Array(#"{"iss":"\#(teamId)","iat":\#(issuedAt)}"#.utf8))
    let signature = try key.signature(for: Array("\(header).\(claims)".utf8))
    return "\(header).\(claims).\(b64(signature.rawRepresentation))"
}
