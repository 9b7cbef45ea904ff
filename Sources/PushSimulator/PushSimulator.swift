import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushCore
import Synchronization

/// A strict APNs look-alike: HTTP/2 over TLS with certificate or provider-token authentication, Apple's
/// validation rules and reasons, scriptable device state and injectable faults.
///
/// ```swift
/// let simulator = try PushSimulator(configuration: config)
/// let port = try await simulator.start()
/// // … send to https://127.0.0.1:port/3/device/<token> …
/// simulator.faults.goAwayAfterStreams = 100
/// print(simulator.counters.accepted, simulator.received.last?.request.topic ?? "")
/// try await simulator.stop()
/// ```
public final class PushSimulator: Sendable {
    /// The configuration it was created with (faults and devices change at runtime through this object).
    public let configuration: SimulatorConfiguration
    let core: SimulatorCore
    private let run = Mutex(RunState())

    private struct RunState {
        var server: (any Channel)?
        var port: Int?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
        /// New connections are reset at once (``suspend()``).
        var suspended = false
    }

    /// Creates a simulator; nothing listens until ``start()``.
    /// - Throws: ``SimulatorError`` when a provider-token key or the record file cannot be used.
    public init(configuration: SimulatorConfiguration) throws(SimulatorError) {
        self.configuration = configuration
        self.core = try SimulatorCore(configuration: configuration)
    }

    /// Starts listening and returns the bound port (useful with port 0).
    /// - Throws: ``SimulatorError`` for unusable TLS material or when the address cannot be bound.
    @discardableResult
    public func start() async throws -> Int {
        try await listen(port: configuration.port)
    }

    /// Plays an APNs outage: every open connection is reset (TCP RST, no GOAWAY), as when the APNs process
    /// dies, and new connections are reset as soon as they are accepted (as a load balancer with no healthy
    /// APNs behind it does) until ``resume()``. The port stays bound, so nothing else can take it meanwhile.
    public func suspend() async {
        let connections = run.withLock { state -> [any Channel] in
            state.suspended = true
            return Array(state.connections.values)
        }
        for connection in connections {
            connection.pipeline.fireUserInboundEventTriggered(SimulatorConnectionHandler.ResetConnection())
        }
    }

    /// Ends ``suspend()``: new connections are served again.
    public func resume() async throws {
        run.withLock { $0.suspended = false }
    }

    private func listen(port requestedPort: Int) async throws -> Int {
        let sslContext = try makeSSLContext()
        let core = self.core
        let http2 = Self.http2Configuration(maxConcurrentStreams: configuration.maxConcurrentStreams)
        let group = configuration.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // TCP_NODELAY is an IPPROTO_TCP option: `.socketOption(.tcp_nodelay)` set SOL_SOCKET's option 1, SO_DEBUG,
            // which only root may set, so every connection to a simulator run by another user was closed at once.
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // Bigger reads mean bigger batches: one TLS write and one flush per batch of answers.
            .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16384, maximum: 262_144))
            .childChannelOption(.maxMessagesPerRead, value: 8)
            .childChannelInitializer { [weak self] channel in
                core.recorder.count { $0.connections += 1 }
                guard let self, self.track(channel) else {
                    // Suspended (or stopped): reset the connection right away.
                    if let provider = channel as? SocketOptionProvider {
                        _ = provider.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0))
                    }
                    return channel.close()
                }
                // Black hole: no TLS handler, so the client's ClientHello is read and dropped forever.
                if core.faults.blackHole { return channel.eventLoop.makeSucceededVoidFuture() }
                if core.shouldResetHandshake() {
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HandshakeResetHandler(core: core))
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    if core.configuration.recordFile != nil { try sync.addHandler(RecordBeforeFlushHandler(recorder: core.recorder)) }
                    // HTTP/2 for a client that opens with its preface, whatever ALPN said (clients such as aioapns
                    // offer none and speak h2 by prior knowledge); HTTP/1.1, Web Push only, for anything else.
                    try sync.addHandler(
                        HTTPVersionSniffer(
                            http2: { sync in
                                try sync.addHandler(
                                    NIOHTTP2Handler(
                                        mode: .server, connectionConfiguration: http2.connection,
                                        streamConfiguration: http2.stream))
                                try sync.addHandler(SimulatorConnectionHandler(core: core))
                            },
                            http1: { sync in
                                try sync.configureHTTPServerPipeline(withErrorHandling: true)
                                try sync.addHandler(WebPushHTTP1Handler(core: core))
                            }))
                }
            }
        let server: any Channel
        do {
            server = try await bootstrap.bind(host: configuration.host, port: requestedPort).get()
        } catch {
            // NIO's own text for a failed bind has a stray parenthesis: name the system's reason instead.
            let reason = (error as? IOError).map { "\(String(cString: strerror($0.errnoCode))) (errno \($0.errnoCode))" } ?? "\(error)"
            throw SimulatorError(.bindFailed, "cannot listen on \(configuration.host):\(requestedPort): \(reason)")
        }
        let port = server.localAddress?.port ?? requestedPort
        core.webPush.port.store(port, ordering: .relaxed)
        run.withLock {
            $0.server = server
            $0.port = port
            $0.stopped = false
        }
        return port
    }

    /// Stops listening, closes every connection and flushes the record file.
    public func stop() async throws {
        let (server, connections) = detach()
        try? await server?.close()
        // Close all at once: each TLS close may wait for the peer's close_notify.
        let closing = connections.map { $0.close() }
        for future in closing { try? await future.get() }
        core.recorder.close()
    }

    /// Marks the simulator stopped and hands back the listener and the open connections (to close or reset).
    private func detach() -> ((any Channel)?, [any Channel]) {
        run.withLock { state in
            state.stopped = true
            let result = (state.server, Array(state.connections.values))
            state.server = nil
            state.connections = [:]
            return result
        }
    }

    /// The bound port while running.
    public var port: Int? { run.withLock { $0.port } }

    /// The most recent accepted notifications, oldest first (at most ``SimulatorConfiguration/receivedLimit``).
    public var received: [ReceivedNotification] { core.recorder.received }

    /// The development inbox: the newest notifications every service accepted, newest first, at most `limit` (and
    /// at most ``SimulatorConfiguration/inboxLimit``, which is 0 unless set).
    public func inbox(limit: Int) -> [InboxEntry] { core.recorder.inbox(limit: limit) }

    /// How many entries the inbox keeps (``SimulatorConfiguration/inboxLimit``).
    public var inboxCapacity: Int { core.recorder.inboxLimit }

    /// Counters by status and reason since start (or the last ``resetRecords()``).
    public var counters: SimulatorCounters { core.recorder.counters }

    /// Clears ``received`` and ``counters``.
    public func resetRecords() { core.recorder.reset() }

    /// The active faults; assign to change them while running (new values apply to the next request).
    public var faults: SimulatorFaults {
        get { core.faults }
        set { core.faults = newValue }
    }

    /// Scripted device behaviour.
    public var devices: [DeviceToken: DeviceBehaviour] { core.devices }

    /// Sets (or with nil clears) how the simulator treats one token.
    public func setDevice(_ token: DeviceToken, _ behaviour: DeviceBehaviour?) {
        core.updateDevices { $0[token] = behaviour }
    }

    /// Marks a token unregistered: 410 with `timestampMs`, or the time of each request when nil.
    public func unregister(_ token: DeviceToken, timestampMs: Int64? = nil) {
        setDevice(token, .unregistered(timestampMs: timestampMs))
    }

    /// The broadcast channels `bundleId` holds, oldest first.
    public func channels(bundleId: String) -> [SimulatorChannel] { core.channels.channels(bundleId: bundleId) }

    /// Adds broadcast channels for `bundleId` without a request (test setup; the channel limit is not checked).
    public func addChannels(_ channels: [SimulatorChannel], bundleId: String) {
        core.channels.insert(channels, bundleId: bundleId)
    }

    /// When `token`'s Live Activity ended (an accepted liveactivity `end` event), in ms since 1970, or nil.
    public func activityEnded(_ token: DeviceToken) -> Int64? { core.activityEnded(token) }

    // MARK: - Web Push

    /// Mints a Web Push subscription on this simulator (started: its endpoint names the bound port), restricted to
    /// `applicationServerKey` (a VAPID public key, 65-octet uncompressed P-256 point) when given: what a browser's
    /// `pushManager.subscribe()` would hand a web app. `POST /subscribe` does the same over the wire.
    public func mintWebPushSubscription(applicationServerKey: [UInt8]? = nil) -> MintedSubscription {
        core.webPush.mint(applicationServerKey: applicationServerKey)
    }

    /// Marks a subscription expired: its pushes answer 410 Unregistered. False when there is no such subscription.
    @discardableResult
    public func expireWebPushSubscription(id: String) -> Bool { core.webPush.subscriptions.expire(id) }

    /// Every subscription minted so far, in no particular order.
    public var webPushSubscriptions: [MintedSubscription] { core.webPush.subscriptions.all() }

    /// The most recent accepted (decrypted) Web Push messages, oldest first (at most
    /// ``SimulatorConfiguration/receivedLimit``).
    public var receivedWebPushes: [ReceivedWebPush] { core.recorder.webPushes }

    // MARK: - UnifiedPush

    /// Registers a UnifiedPush endpoint on this simulator (started: its endpoint names the bound port), restricted to
    /// `vapid` (a VAPID public key, 65-octet uncompressed P-256 point) when given: what a UnifiedPush connector
    /// library hands an Android app (``MintedSubscription/connectorJSON``). `POST /up/register` does the same over
    /// the wire.
    public func registerUnifiedPushEndpoint(vapid: [UInt8]? = nil) -> MintedSubscription {
        core.unifiedPush.register(applicationServerKey: vapid)
    }

    /// Unregisters a UnifiedPush endpoint (as `DELETE /up/<id>`): its pushes answer 404. False when there is no such
    /// endpoint.
    @discardableResult
    public func unregisterUnifiedPushEndpoint(id: String) -> Bool { core.unifiedPush.unregister(id: id) }

    /// Every UnifiedPush endpoint registered so far, in no particular order.
    public var unifiedPushEndpoints: [MintedSubscription] { core.webPush.subscriptions.all(.unifiedPush) }

    /// The most recent accepted (decrypted) UnifiedPush messages, oldest first (at most
    /// ``SimulatorConfiguration/receivedLimit``).
    public var receivedUnifiedPushes: [ReceivedUnifiedPush] { core.recorder.unifiedPushes }

    // MARK: - FCM's OAuth token endpoint

    /// The OAuth token endpoint's URL on this simulator (started: it names the bound port), `https://host:port/token`:
    /// the `token_uri` of the service accounts it issues.
    public var tokenURI: String { core.webPush.defaultOrigin() + OAuthTokenService.path }

    /// Trusts a service account from now on: `POST /token` grants access tokens to assertions it signs.
    /// - Throws: ``SimulatorError`` when its public key is not an RSA key of 2048 bits or more.
    public func trustServiceAccount(_ account: SimulatorServiceAccount) throws(SimulatorError) {
        try core.oauth.trust(account)
    }

    /// How many access tokens the token endpoint has granted since start.
    public var accessTokensGranted: Int { core.oauth.counts.granted }

    /// How many token requests it has refused since start.
    public var accessTokenRequestsRefused: Int { core.oauth.counts.refused }

    /// True while `token` is an access token the endpoint granted that has not expired.
    public func isValidAccessToken(_ token: String) -> Bool { core.oauth.isValid(accessToken: token) }

    // MARK: - FCM HTTP v1

    /// A new registration token in FCM's form: what an Android app's `FirebaseMessaging.getToken()` would hand it.
    /// The FCM endpoint accepts any well-formed token until ``unregisterFCMToken(_:)``.
    public static func mintFCMToken() -> String { FCMMessageService.mintToken() }

    /// Marks a registration token unregistered (the app was uninstalled): sends to it answer 404 UNREGISTERED.
    public func unregisterFCMToken(_ token: String) { core.fcm.unregister(token) }

    /// The most recent FCM messages accepted, oldest first (at most ``SimulatorConfiguration/receivedLimit``).
    public var receivedFCMMessages: [ReceivedFCMMessage] { core.fcm.received }

    /// How many FCM messages were accepted since start.
    public var fcmMessagesAccepted: Int { core.fcm.accepted }

    // MARK: - Huawei Push Kit

    /// Huawei's OAuth token endpoint on this simulator (started: it names the bound port),
    /// `https://host:port/oauth2/v3/token` (Huawei's: `https://oauth-login.cloud.huawei.com/oauth2/v3/token`).
    public var hmsTokenURL: String { core.webPush.defaultOrigin() + HMSTokenService.path }

    /// The Push Kit base URL on this simulator, `https://host:port` (Huawei's: `https://push-api.cloud.huawei.com`):
    /// sends go to `\(hmsPushBaseURL)/v1/{clientId}/messages:send`.
    public var hmsPushBaseURL: String { core.webPush.defaultOrigin() }

    /// Trusts a Huawei app from now on: `POST /oauth2/v3/token` grants access tokens to its client id and secret
    /// (replacing the secret when the client id is known).
    public func trustHMSApp(clientId: String, secret: String) { core.hmsOAuth.trust(clientId: clientId, secret: secret) }

    /// How many Huawei access tokens the token endpoint has granted since start.
    public var hmsAccessTokensGranted: Int { core.hmsOAuth.counts.granted }

    /// How many Huawei token requests it has refused since start.
    public var hmsAccessTokenRequestsRefused: Int { core.hmsOAuth.counts.refused }

    /// True while `token` is a Huawei access token the endpoint granted that has not expired.
    public func isValidHMSAccessToken(_ token: String) -> Bool {
        if case .valid = core.hmsOAuth.state(of: token) { return true }
        return false
    }

    /// Every Huawei access token granted so far answers as expired from now on (401 `80200003`), as when Huawei
    /// expires tokens before their `expires_in`; tokens granted later are valid.
    public func expireHMSAccessTokens() { core.hmsOAuth.expireAll() }

    /// A new push token in HMS's form (130 characters, `IQAAAACy…`): what an Android app's HmsInstanceId.getToken()
    /// would hand it. The Push Kit endpoint accepts any well-formed token until ``invalidateHMSToken(_:)``.
    public static func mintHMSToken() -> String { HMSMessageService.mintToken() }

    /// Marks a push token invalid: alone in a send it is 400 `80300007`, beside valid ones named in the 80100000 answer.
    public func invalidateHMSToken(_ token: String) { core.hms.invalidate(token) }

    /// The most recent Push Kit messages accepted, one per token delivered, oldest first (at most
    /// ``SimulatorConfiguration/receivedLimit``).
    public var receivedHMSMessages: [ReceivedHMSMessage] { core.hms.received }

    /// How many Push Kit messages were accepted since start, one per token delivered.
    public var hmsMessagesAccepted: Int { core.hms.accepted }

    /// Trusts a HarmonyOS service account: the Push Kit scenario endpoint accepts the JWTs it signs for its project.
    public func trustHarmonyOSAccount(_ account: SimulatorHarmonyOSAccount) { core.harmonyos.trust(account) }

    /// A new HarmonyOS push token (the same form as HMS Core's, which the endpoint checks).
    public static func mintHarmonyOSToken() -> String { HMSMessageService.mintToken() }

    /// Marks a HarmonyOS push token invalid: sends to it answer 80300007 (`noRight`).
    public func invalidateHarmonyOSToken(_ token: String) { core.harmonyos.invalidate(token) }

    /// Every JWT accepted so far answers 80200003 (expired) from now on.
    public func expireHarmonyOSTokens() { core.harmonyos.expireAll() }

    /// The HarmonyOS messages accepted (the newest, up to the received limit).
    public var receivedHarmonyOSMessages: [ReceivedHarmonyOSMessage] { core.harmonyos.received }

    /// How many HarmonyOS messages were accepted (one per token).
    public var harmonyosMessagesAccepted: Int { core.harmonyos.accepted }

    /// Replaces all scripted device behaviour.
    public func replaceDevices(_ devices: [DeviceToken: DeviceBehaviour]) {
        core.updateDevices { $0 = devices }
    }

    /// Registers a new connection; false when the simulator is stopped or suspended (the caller resets it).
    private func track(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let accepted = run.withLock { state -> Bool in
            guard !state.stopped, !state.suspended else { return false }
            state.connections[id] = channel
            return true
        }
        guard accepted else { return false }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.run.withLock { $0.connections.removeValue(forKey: id) }
        }
        return true
    }
}
