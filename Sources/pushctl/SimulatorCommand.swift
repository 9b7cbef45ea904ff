import PushSimulator
import ArgumentParser
import Foundation
import PushCore
import PushSecrets
import Synchronization

/// `pushctl simulator`: runs the built-in simulator (APNs, Web Push, FCM) until SIGINT/SIGTERM, then prints a summary.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator",
        abstract: "Run the built-in simulator of APNs, Web Push, FCM and Huawei Push Kit (HTTP/2 over TLS, each service's rules, injectable faults).",
        discussion: """
            Reads ca.pem, server.pem and server.key from the configuration's simulator.certificates directory \
            (or --certificates). Token-auth apps whose endpoint is "simulator" have their .p8 keys accepted \
            automatically. Prints "listening on https://HOST:PORT" once ready; a summary on SIGINT/SIGTERM. \
            The same port plays a Web Push service (RFC 8030/8291/8292, HTTP/2 or HTTP/1.1): POST /subscribe mints \
            a subscription, POST /wp/<id> takes pushes (see docs/simulator.md). With --fcm-service-account it also \
            plays Google's OAuth token endpoint (POST /token) and FCM HTTP v1 (POST \
            /v1/projects/PROJECT/messages:send) for Android senders. Apps in --config whose hms endpoint is \
            "simulator" get Huawei's OAuth endpoint (POST /oauth2/v3/token, client credentials) and Push Kit \
            (POST /v1/CLIENTID/messages:send, see docs/hms.md). Apps whose harmonyos endpoint is simulator get Push Kit's \
            scenario API for HarmonyOS NEXT (POST /v3/PROJECTID/messages:send, the service account's JWT checked, see \
            docs/harmonyos.md).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "Interface to bind (default: config simulator.host, else 127.0.0.1).")
    var host: String?
    @Option(help: "Port; 0 picks a free one (default: config simulator.port, else 2197).")
    var port: Int?
    @Option(help: "Directory with ca.pem, server.pem, server.key (default: config simulator.certificates).")
    var certificates: String?
    @Option(help: "Client authentication: certificate, token, either (a certificate if the client presents one, else a provider token, as APNs) or none (default certificate).")
    var clientAuth: String = "certificate"
    @Option(help: "Environment played: development or production (default development).")
    var environment: String = "development"
    @Option(help: "Provider-token key KEYID:TEAMID:FILE (.p8 or public key PEM); repeatable.")
    var jwtKey: [String] = []
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS (default 1000).")
    var maxConcurrentStreams: Int = 1000
    @Option(help: "Append every accepted notification to this file as JSON lines.")
    var record: String?
    @Option(help: "Devices file (JSON) scripting unregistered/bad/other-environment/throttled tokens.")
    var devices: String?
    @Option(help: "Broadcast channels one bundle id may hold (default 10000, Apple's limit); more answer CannotCreateChannelConfig.")
    var maxChannels: Int = 10_000
    @Option(help: "Bundle id without the broadcast capability (channel and broadcast requests answer FeatureNotEnabled); repeatable.")
    var broadcastDisabled: [String] = []
    @Option(help: "While a client streams requests in small pieces, hold its socket reads this many ms apart (one wake-up reads many requests); 0 turns it off. Default 1.")
    var readPacingMs: Int = 1
    @Option(help: "Fault: GOAWAY after this many streams per connection.")
    var goawayAfter: Int?
    @Flag(help: "Fault: after a rejection drop MAX_CONCURRENT_STREAMS to 1 until the next success.")
    var dropStreamLimit = false
    @Option(help: "How a stream over the stream limit is answered: refuse (RST_STREAM REFUSED_STREAM), protocol-error (RST_STREAM PROTOCOL_ERROR) or close (GOAWAY PROTOCOL_ERROR, then the connection closed). Default refuse.")
    var excessStream: String = "refuse"
    @Option(help: "Fault: AFTER:LIMIT:FOR — when a connection's stream AFTER opens, advertise MAX_CONCURRENT_STREAMS LIMIT; FOR streams later, the configured limit again.")
    var streamLimitChange: String?
    @Option(help: "Fault: TCP reset when the stream after this many opens on a connection.")
    var resetAfter: Int?
    @Option(help: "Fault: delay answers by this many milliseconds.")
    var delayMs: Int = 0
    @Option(help: "Fault: share of answers delayed (0…1, default 1).")
    var delayFraction: Double = 1
    @Option(help: "Fault: answer at most this many requests per second over all connections, each answer written on its own (a slow server: answers trickle in one by one).")
    var answersPerSecond: Double?
    @Option(name: .customLong("fraction-429"), help: "Fault: share of requests answered 429 (0…1).")
    var fraction429: Double = 0
    @Option(name: .customLong("fraction-503"), help: "Fault: share of requests answered 503 (0…1).")
    var fraction503: Double = 0
    @Option(name: .customLong("fraction-500"), help: "Fault: share of requests answered 500 (0…1).")
    var fraction500: Double = 0
    @Option(parsing: .unconditional, help: "Send a `date` header this many seconds off the system clock (negative: behind), as a server with a wrong clock would (default 0).")
    var dateSkewSeconds: Int64 = 0
    @Flag(help: "Fault: accept TCP connections but never finish the TLS handshake.")
    var blackHole = false
    @Option(name: .customLong("reset-handshakes"), help: "Fault: reset (TCP RST) the TLS handshake of the first N connections.")
    var resetHandshakes: Int?
    @Option(help: "FCM: a Google service-account JSON file whose assertions POST /token grants access tokens to; written first (a new RSA 2048 key, mode 0600, token_uri this simulator's /token) when it does not exist. Needs --client-auth either, token or none.")
    var fcmServiceAccount: String?
    @Option(help: "FCM: lifetime of the access tokens POST /token grants, in seconds (default 3599, as Google).")
    var accessTokenLifetime: Int64 = 3599
    @Option(help: "FCM: a file of registration tokens (one per line) that FCM answers 404 UNREGISTERED, as for apps that were uninstalled.")
    var fcmUnregistered: String?

    @Option(help: "HMS: a file of push tokens (one per line) Push Kit answers 80300007 (invalid), as uninstalled apps' or another app's tokens.")
    var hmsInvalid: String?
    @Option(help: "HarmonyOS: a file of push tokens (one per line) Push Kit's scenario API answers 80300007 (noRight), as another project's or gone tokens.")
    var harmonyosInvalid: String?
    @Option(name: .customLong("fraction-hms-503"), help: "Fault: share of Push Kit sends answered HTTP 503, Huawei's flow control (0…1).")
    var fractionHMS503: Double = 0
    @Option(help: "HMS: lifetime of the access tokens POST /oauth2/v3/token grants, in seconds (default 3600, as Huawei).")
    var hmsAccessTokenLifetime: Int64 = 3600
    @Option(help: "Fault: once this many Push Kit messages were accepted, every HMS access token granted so far answers 80200003 (expired), as when Huawei expires tokens early; once.")
    var hmsExpireTokensAfter: Int?

    func run() async throws {
        let configuration = try makeConfiguration()
        let simulator: PushSimulator
        do { simulator = try PushSimulator(configuration: configuration) } catch {
            throw CLIError.usage(error.message)
        }
        let bound: Int
        do { bound = try await simulator.start() } catch let error as SimulatorError {
            throw CLIError(code: error.code == .bindFailed ? 1 : 2, message: error.message)
        }
        if let fcmServiceAccount {
            do {
                let line = try Self.trustServiceAccount(
                    file: absolutePath(fcmServiceAccount), shown: fcmServiceAccount, simulator: simulator)
                Self.emit(line)
            } catch {
                try await simulator.stop()
                throw error
            }
        }
        // As for .p8 keys, and as `serve` does: the service account of every app in --config whose FCM endpoint is
        // `simulator` is trusted, so its grants work without --fcm-service-account.
        for (key, path) in configuredServiceAccounts() {
            let data: [UInt8]
            do { data = try SecretFileLoader.read(path, name: key) } catch {
                Self.emit("simulator: not trusting \(key): \(error.message)")
                continue
            }
            do {
                try simulator.trustServiceAccount(try SimulatorServiceAccount(serviceAccountJSON: data, source: path))
                Self.emit("simulator: FCM service account from \(key) (\(path))")
            } catch {
                Self.emit("simulator: not trusting \(key): \(error.message)")
            }
        }
        // As for FCM: the client credentials of every app in --config whose Push Kit endpoint is `simulator`.
        for app in configuredHMSApps() {
            do {
                simulator.trustHMSApp(clientId: app.clientId, secret: try SecretFileLoader.readFirstLine(app.secretFile, name: app.key))
                Self.emit("simulator: Push Kit client \(app.clientId) from \(app.key)")
            } catch {
                Self.emit("simulator: not trusting \(app.key): \(error.message)")
            }
        }
        // As for FCM: the service accounts of every app in --config whose HarmonyOS endpoint is `simulator`.
        SimulatorHost.trustHarmonyOS(configuredHarmonyOSAccounts(), in: simulator) { Self.emit($0) }
        // The early expiry fault: one watcher that expires every access token once, when the count is reached.
        let expiry = hmsExpireTokensAfter.map { after in
            Task {
                while !Task.isCancelled, simulator.hmsMessagesAccepted < after { try? await Task.sleep(for: .milliseconds(5)) }
                guard !Task.isCancelled else { return }
                simulator.expireHMSAccessTokens()
                Self.emit("simulator: every HMS access token expired after \(simulator.hmsMessagesAccepted) Push Kit messages")
            }
        }
        defer { expiry?.cancel() }
        // Unbuffered, so scripts waiting for the port see the line at once.
        Self.emit("simulator: listening on https://\(configuration.host):\(bound) "
            + "(client auth \(configuration.clientAuth.rawValue), \(configuration.environment.rawValue))")
        let signal = await Self.waitForTermination()
        try await simulator.stop()
        Self.emit("simulator: stopped by signal \(signal)\n" + simulator.counters.summary)
    }

    static func emit(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Waits until SIGINT or SIGTERM arrives and returns its number.
    ///
    /// A plain handler storing into an atomic, polled here: a dispatch signal source needs the signal blocked
    /// in every thread (NIO's included), otherwise the first signal can land on a thread that ignores it.
    static func waitForTermination() async -> Int32 {
        for number in [SIGINT, SIGTERM] {
            _ = Foundation.signal(number) { received in TerminationSignal.number.store(received, ordering: .relaxed) }
        }
        while true {
            let number = TerminationSignal.number.load(ordering: .relaxed)
            if number != 0 { return number }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// The signal that asked `pushctl simulator` to stop (0 while running).
enum TerminationSignal {
    static let number = Atomic<Int32>(0)
}
