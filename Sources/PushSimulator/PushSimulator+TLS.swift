import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL

extension PushSimulator {
    func makeSSLContext() throws(SimulatorError) -> NIOSSLContext {
        do {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(configuration.serverCertificatePEM.utf8))
            guard !chain.isEmpty else { throw SimulatorError(.badTLSMaterial, "server certificate PEM holds no certificate") }
            let key = try NIOSSLPrivateKey(bytes: Array(configuration.serverKeyPEM.utf8), format: .pem)
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            tls.minimumTLSVersion = .tlsv12
            // h2 for APNs and Web Push; http/1.1 for Web Push senders that speak nothing else (HTTPVersionSniffer).
            tls.applicationProtocols = ["h2", "http/1.1"]
            // Don't wait long for a peer's close_notify when closing (GOAWAY fault, stop()).
            tls.shutdownTimeout = .seconds(1)
            switch configuration.clientAuth {
            case .certificate, .either:
                guard let caPEM = configuration.caPEM else {
                    throw SimulatorError(.badConfiguration, "certificate client auth needs the CA (caPEM / ca.pem)")
                }
                let roots = try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8))
                guard !roots.isEmpty else { throw SimulatorError(.badTLSMaterial, "CA PEM holds no certificate") }
                // Chain to the CA, no hostname check: APNs client certificates name an app, not a host. In
                // `either` mode a certificate is asked for but not required (a token client sends none); one
                // that is presented must still chain to the CA.
                tls.certificateVerification = configuration.clientAuth == .either ? .optionalVerification : .noHostnameVerification
                tls.trustRoots = .certificates(roots)
            case .token, .none:
                tls.certificateVerification = .none
            }
            return try NIOSSLContext(configuration: tls)
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.badTLSMaterial, "cannot load the simulator's TLS material: \(error)")
        }
    }

    /// HTTP/2 settings: APNs' stream limit and header list size, and DoS limits raised so well-behaved
    /// clients are never cut off (curl 7.88 sends RST_STREAM after every body-less response).
    static func http2Configuration(maxConcurrentStreams: Int) -> NIOHTTP2Handler.Configuration {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8000),
        ]
        connection.maximumConnectionGlitches = 1 << 30
        // NIO's generic header-block validation costs ~20% of the per-request CPU; the connection handler
        // applies the same HTTP/2 rules while it reads the headers anyway (see `parseHead`).
        connection.headerBlockValidation = .disabled
        connection.controlFrameRateLimit.maximumCount = 1 << 30
        connection.maximumRecentlyResetStreams = 1024
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.streamResetFrameRateLimit.maximumCount = 1 << 30
        stream.streamErrorRateLimit.maximumCount = 1 << 30
        return .init(connection: connection, stream: stream)
    }
}

extension SimulatorConfiguration {
    /// Reads `ca.pem`, `server.pem` and `server.key` (the names `pushctl cert make-dev` writes) from a
    /// directory. The CA is optional outside certificate mode.
    public static func pemFiles(in directory: String) throws(SimulatorError) -> (ca: String?, certificate: String, key: String) {
        func read(_ name: String) -> String? {
            FileManager.default.contents(atPath: directory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
        }
        guard let certificate = read("server.pem") else {
            throw SimulatorError(.badTLSMaterial, "cannot read \(directory)/server.pem (run `pushctl cert make-dev`)")
        }
        guard let key = read("server.key") else {
            throw SimulatorError(.badTLSMaterial, "cannot read \(directory)/server.key (run `pushctl cert make-dev`)")
        }
        return (read("ca.pem"), certificate, key)
    }
}
