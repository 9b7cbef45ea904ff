import Foundation
import NIOCore
import PushCore

/// Everything an ``PushSimulator`` needs to start. Defaults follow APNs where APNs has a documented value.
public struct SimulatorConfiguration: Sendable {
    /// How clients prove who they are.
    public enum ClientAuth: String, Sendable, CaseIterable {
        /// A TLS client certificate chaining to ``SimulatorConfiguration/caPEM`` (APNs' certificate auth).
        case certificate
        /// `authorization: bearer <JWT>` signed with one of ``SimulatorConfiguration/jwtKeys``.
        case token
        /// Either, as APNs' hosts take both: a connection that presents a client certificate (it must chain to
        /// ``SimulatorConfiguration/caPEM``) is judged by it, one without by its provider token. `pushctl serve`
        /// runs its built-in simulator this way, so certificate (.p12) and token (.p8) apps work side by side.
        case either
        /// Anyone may send (for load generators such as h2load that cannot present a certificate).
        case none
    }

    /// Interface to bind. Default `127.0.0.1`.
    public var host: String
    /// TCP port; 0 (the default) picks a free one, read it back from ``PushSimulator/start()``.
    public var port: Int
    /// PEM of the CA that client certificates must chain to. Required for ``ClientAuth/certificate`` and
    /// ``ClientAuth/either``.
    public var caPEM: String?
    /// PEM of the server certificate chain (leaf first) presented to clients.
    public var serverCertificatePEM: String
    /// PEM of the server certificate's private key.
    public var serverKeyPEM: String
    /// Client authentication mode. Default ``ClientAuth/certificate``, as APNs' certificate endpoint.
    public var clientAuth: ClientAuth
    /// Provider-token signing keys accepted in ``ClientAuth/token`` and ``ClientAuth/either`` modes. Default none.
    public var jwtKeys: [SimulatorJWTKey]
    /// The environment this simulator plays. Default `.development` (the sandbox).
    public var environment: APNsEnvironment
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised to every connection. Default 1000, as APNs.
    public var maxConcurrentStreams: Int
    /// How long a provider token stays valid after its `iat`, in seconds. Default 3600, as APNs.
    public var providerTokenLifetime: Int64
    /// JSON-lines file every accepted notification is appended to. Default none.
    public var recordFile: String?
    /// How many accepted notifications ``PushSimulator/received`` keeps (oldest dropped first), so long
    /// benchmarks run in bounded memory. Counters always cover everything. Default 10,000.
    public var receivedLimit: Int
    /// How many accepted notifications of every service the development inbox keeps, newest first
    /// (``PushSimulator/inbox(limit:)``; `pushctl serve` shows them in the console). 0, the default, keeps none and
    /// spends nothing on it: a benchmark's simulator records no inbox.
    public var inboxLimit = 0
    /// Faults active from the start; change them later with ``PushSimulator/faults``. Default none.
    public var faults: SimulatorFaults
    /// Scripted device behaviour active from the start (see ``DeviceBehaviour``). Default none.
    public var devices: [DeviceToken: DeviceBehaviour]
    /// Broadcast channels one bundle id may hold at once; creating more answers 400
    /// CannotCreateChannelConfig. Default 10,000, Apple's limit per app and environment.
    public var maxChannelsPerBundleId: Int
    /// Bundle ids without the broadcast capability: their channel and broadcast requests answer 400
    /// FeatureNotEnabled. Default none.
    public var broadcastDisabledBundleIds: Set<String>
    /// Milliseconds since 1970, for `iat` checks and 410 timestamps. Default: the system clock.
    public var clock: @Sendable () -> Int64
    /// How far the `date` header of every answer is off ``clock``, in seconds (default 0): a test double of a
    /// server whose clock is wrong, for `pushctl doctor`'s clock check. Nothing else depends on it.
    public var dateSkewSeconds: Int64 = 0
    /// Event loops serving connections. Default: NIO's shared multi-threaded group.
    public var eventLoopGroup: (any EventLoopGroup)?
    /// While a client streams requests faster than this, its connection's socket reads are held this far
    /// apart, so one wake-up reads many requests instead of a frame or two (clients such as libcurl write each
    /// HTTP/2 frame on its own). A client that waits for each answer is not held (see
    /// `SimulatorConnectionHandler.read(context:)`). Zero turns pacing off. Default 1 ms.
    public var readPacing: Duration = .milliseconds(1)
    /// Google service accounts the OAuth token endpoint (`POST /token`) grants FCM access tokens to; more can be
    /// trusted while running (``PushSimulator/trustServiceAccount(_:)``). Default none.
    public var fcmServiceAccounts: [SimulatorServiceAccount] = []
    /// How long a granted access token lives (`expires_in`), in seconds. Default 3599, as Google answers; tests
    /// shorten it to see renewals.
    public var accessTokenLifetime: Int64 = 3599
    /// FCM registration tokens answered 404 `UNREGISTERED` from the start (the apps were uninstalled); more can be
    /// added while running (``PushSimulator/unregisterFCMToken(_:)``). Default none.
    public var fcmUnregisteredTokens: Set<String> = []
    /// FCM registration tokens an app registered with another Firebase project's sender ID: sends to them answer 403
    /// `SENDER_ID_MISMATCH` (what every token answers when the service account is the wrong project's). Default none.
    public var fcmForeignTokens: Set<String> = []
    /// Huawei apps the OAuth endpoint (`POST /oauth2/v3/token`) grants Push Kit access tokens to: client id (Huawei's
    /// app id, the `{clientId}` of the send URL) → client secret. More can be trusted while running
    /// (``PushSimulator/trustHMSApp(clientId:secret:)``). Default none.
    public var hmsApps: [String: String] = [:]
    /// How long a granted Huawei access token lives (`expires_in`), in seconds. Default 3600, Huawei's fixed value;
    /// tests shorten it to see renewals.
    public var hmsAccessTokenLifetime: Int64 = 3600
    /// HMS push tokens that are invalid from the start (uninstalled apps, another app's tokens): a send to them alone
    /// is 400 `80300007`, beside valid ones 200 `80100000` naming them. More can be added while running
    /// (``PushSimulator/invalidateHMSToken(_:)``). Default none.
    public var hmsInvalidTokens: Set<String> = []
    /// HarmonyOS service accounts whose JWTs the Push Kit scenario endpoint (`POST /v3/{projectId}/messages:send`)
    /// accepts (``PushSimulator/trustHarmonyOSAccount(_:)`` adds more while running). Default none.
    public var harmonyosAccounts: [SimulatorHarmonyOSAccount] = []
    /// HarmonyOS push tokens Push Kit answers `80300007` for (`noRight`: another project's, or gone). Default none.
    public var harmonyosInvalidTokens: Set<String> = []

    /// Creates a configuration; only the server's TLS identity is required.
    public init(
        host: String = "127.0.0.1", port: Int = 0, caPEM: String? = nil,
        serverCertificatePEM: String, serverKeyPEM: String,
        clientAuth: ClientAuth = .certificate, jwtKeys: [SimulatorJWTKey] = [],
        environment: APNsEnvironment = .development, maxConcurrentStreams: Int = 1000,
        providerTokenLifetime: Int64 = 3600, recordFile: String? = nil, receivedLimit: Int = 10_000,
        faults: SimulatorFaults = .init(), devices: [DeviceToken: DeviceBehaviour] = [:],
        maxChannelsPerBundleId: Int = 10_000, broadcastDisabledBundleIds: Set<String> = [],
        clock: @escaping @Sendable () -> Int64 = SimulatorClock.systemMilliseconds,
        eventLoopGroup: (any EventLoopGroup)? = nil
    ) {
        self.host = host
        self.port = port
        self.caPEM = caPEM
        self.serverCertificatePEM = serverCertificatePEM
        self.serverKeyPEM = serverKeyPEM
        self.clientAuth = clientAuth
        self.jwtKeys = jwtKeys
        self.environment = environment
        self.maxConcurrentStreams = maxConcurrentStreams
        self.providerTokenLifetime = providerTokenLifetime
        self.recordFile = recordFile
        self.receivedLimit = receivedLimit
        self.faults = faults
        self.devices = devices
        self.maxChannelsPerBundleId = maxChannelsPerBundleId
        self.broadcastDisabledBundleIds = broadcastDisabledBundleIds
        self.clock = clock
        self.eventLoopGroup = eventLoopGroup
    }
}

/// A provider-token verification key: Apple's key id, the team it belongs to and its public key.
public struct SimulatorJWTKey: Sendable, Equatable {
    /// The 10-character key id (`kid` in the JWT header).
    public var keyId: String
    /// The team id (`iss` in the JWT claims).
    public var teamId: String
    /// The P-256 public key as PEM (`-----BEGIN PUBLIC KEY-----`); the `.p8` private key PEM is accepted
    /// too (only its public half is used).
    public var publicKeyPEM: String
    /// Topics this team may push to; nil (the default) allows any topic.
    public var topics: [String]?

    /// Creates a key.
    public init(keyId: String, teamId: String, publicKeyPEM: String, topics: [String]? = nil) {
        self.keyId = keyId
        self.teamId = teamId
        self.publicKeyPEM = publicKeyPEM
        self.topics = topics
    }
}

/// Clocks for ``SimulatorConfiguration/clock``.
public enum SimulatorClock {
    /// The system's wall clock in milliseconds since 1970.
    @Sendable public static func systemMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
