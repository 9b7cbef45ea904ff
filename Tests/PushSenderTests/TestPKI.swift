import PushCore
import Foundation
import PushSender
import Synchronization

/// A throw-away PKI made with the `openssl` CLI in a temp dir: CA, server certificate for
/// localhost/127.0.0.1, a client certificate (valid and expired), and a second CA nobody trusts.
struct TestPKI {
    let dir: String

    init() throws {
        dir = NSTemporaryDirectory() + "pushsender-pki-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let script = """
            set -e
            cd '\(dir)'
            cat > ext.cnf <<'X'
            [srv]
            subjectAltName=DNS:localhost,IP:127.0.0.1
            basicConstraints=CA:FALSE
            extendedKeyUsage=serverAuth
            [cli]
            basicConstraints=CA:FALSE
            extendedKeyUsage=clientAuth
            X
            for ca in ca other-ca; do
              openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $ca.key -out $ca.pem \
                -days 30 -subj "/CN=PushSender Test $ca" 2>/dev/null
            done
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile ext.cnf -extensions srv -out server.pem 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key -out client.csr -subj "/UID=com.example.app/CN=Apple Development IOS Push Services: com.example.app" 2>/dev/null
            openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile ext.cnf -extensions cli -out client.pem 2>/dev/null
            openssl x509 -req -in client.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -days 30 -extfile ext.cnf -extensions cli -out stranger.pem 2>/dev/null
            """
        let made = try runProcess("/bin/sh", ["-c", script], timeout: 60)
        guard made.status == 0 else { throw TestPKIError(message: "openssl failed in \(dir): \(made.stderr)") }
    }

    func text(_ name: String) -> String { (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "" }
    func bytes(_ name: String) -> [UInt8] { Array(text(name).utf8) }
    func path(_ name: String) -> String { dir + "/" + name }

    /// The valid client identity (chains to `ca.pem`).
    var clientIdentity: TLSIdentity { TLSIdentity(certificatePEM: bytes("client.pem"), privateKeyPEM: bytes("client.key")) }
    /// A client identity signed by a CA the server does not trust.
    var strangerIdentity: TLSIdentity { TLSIdentity(certificatePEM: bytes("stranger.pem"), privateKeyPEM: bytes("client.key")) }

    func remove() { try? FileManager.default.removeItem(atPath: dir) }
}

struct TestPKIError: Error { let message: String }

/// Certificate-mode credentials holding a fixed identity.
struct FixedCertificate: CredentialProvider {
    let tlsIdentity: TLSIdentity?
    func authorizationHeader() throws -> String? { nil }
    func providerTokenExpired(_ header: String) {}
}

/// A sleeper that records requested delays and returns at once; `onSleep` gets the call number (1-based),
/// so a test can change the server between attempts deterministically.
final class RecordingSleeper: Sleeper, Sendable {
    private let storage = Mutex<[Int]>([])
    private let onSleep: (@Sendable (Int) -> Void)?
    init(onSleep: (@Sendable (Int) -> Void)? = nil) { self.onSleep = onSleep }
    var delays: [Int] { storage.withLock { $0 } }
    func sleep(milliseconds: Int) async {
        let call = storage.withLock { s in
            s.append(milliseconds)
            return s.count
        }
        onSleep?(call)
    }
}

/// Collects results from the batch API (called on the transport thread).
final class ResultBox: Sendable {
    private let storage = Mutex<[DeliveryResult]>([])
    var results: [DeliveryResult] { storage.withLock { $0 } }
    func add(_ r: DeliveryResult) { storage.withLock { $0.append(r) } }
}
