import Foundation
import Logging
import PushCore
import Synchronization

/// Sends notifications to web devices (RFC 8030 Web Push) behind the engine's ``DeliverySender`` seam, with the same
/// semantics as the APNs ``APNsSender`` (docs/webpush.md, "The sender"):
/// - each notification is mapped once (``WebPushPayload``, from a template a broadcast's devices share,
///   ``WebPushTemplateCache``; a silent push is not sent: `.rejected`, status 0, with ``WebPushPayload/silentReason``)
///   and encrypted once (RFC 8291; a payload over one 4096-byte record is `.rejected` before sending); every attempt
///   resends the same body with fresh `TTL` and the cached VAPID token;
/// - answers go through ``WebPushAnswerRule``: accepted; 404/410 `.tokenDead`, pruned unconditionally (Web Push
///   gives no timestamp); 400/413/others `.rejected`; 401/403 stop that origin only (its notifications come back
///   `.unsent`); 429/5xx retried with ``BackoffPolicy``, no sooner than `Retry-After`, then `.deferred`;
/// - a dropped connection resends at once (possibly duplicated when the body left); an unreachable origin is
///   retried with the reconnect backoff until the outage limit, then stops (`.unsent`);
/// - per push-service origin (`https://host[:port]`): its own libcurl loop (``Transport``; HTTP/2 when the service
///   offers it by ALPN, else HTTP/1.1 on up to ``http1ConnectionsPerOrigin`` connections), its own stop and outage
///   state and its own VAPID token, so one failing push service never stalls the others;
/// - before connecting, every resolved address is judged by ``WebPushHostPolicy/refusal(address:for:)``: a
///   loopback, private or link-local one is refused unless the host is listed exactly in `allowedHosts`.
///
/// UnifiedPush is standard Web Push to the distributor each user chose, so the same sender serves it, made with
/// ``Service/unifiedPush(_:)`` (docs/unifiedpush.md): its own answer rule (``UnifiedPushAnswerRule``), its address
/// rule (``UnifiedPushHostPolicy``), silent pushes sent, `http` distributors over HTTP/1.1; every distributor origin
/// its own loop, so one slow distributor never holds back another's devices.
public final class WebPushSender: DeliverySender, Sendable {
    /// Which push services this sender sends to.
    public enum Service: Sendable, Equatable {
        /// Browsers' push services (Apple's, Google's, Mozilla's, Microsoft's and the configured ones).
        case webPush(WebPushHostPolicy)
        /// UnifiedPush distributors: any public host, or one the operator exempts.
        case unifiedPush(UnifiedPushHostPolicy)

        /// The device service the sender's results name.
        public var pushService: PushService {
            switch self {
            case .webPush: .webpush
            case .unifiedPush: .unifiedpush
            }
        }

        /// Why the transport must not connect to `address` for `endpoint` (the service's address rule), or nil.
        func refusal(address: IPAddress, for endpoint: WebPushEndpoint) -> String? {
            switch self {
            case .webPush(let policy): policy.refusal(address: address, for: endpoint)
            case .unifiedPush(let policy): policy.refusal(address: address, for: endpoint)
            }
        }

        /// What an operator does to send to a refused address anyway.
        var exemption: String {
            switch self {
            case .webPush: "List the host exactly in apps.ID.webpush.allowedHosts to send there"
            case .unifiedPush: "List the host or its network in apps.ID.unifiedpush.exemptHosts to send there"
            }
        }
    }

    /// Connections an HTTP/1.1 push service gets per origin (HTTP/2 multiplexes on one), as browsers open.
    public static let http1ConnectionsPerOrigin = 6

    public let configuration: SenderConfiguration
    /// ``SenderConfiguration/inFlightLimit``.
    public var inFlightLimit: Int { configuration.inFlightLimit }
    public let metrics = SenderMetrics()
    /// The sender skeleton every service shares (counts, retries, stops, the last step).
    let core: SenderCore
    /// The VAPID signer (one token per origin, reused until renewal).
    public let signer: VAPIDSigner
    /// Browsers' push services or UnifiedPush distributors.
    public let service: Service
    let caFile: String?
    let declarative: Bool
    let http1Only: Bool
    var clock: SenderClock { core.clock }
    var logger: Logger { core.logger }
    let shared = Mutex(Shared())
    /// The last notifications' mappings (``WebPushTemplateCache``): a broadcast's devices share one.
    let templates = Mutex(WebPushTemplateCache())
    /// Notifications waiting out a retry or reconnect backoff, and the run's stopping flag.
    var waiting: WaitingRoom { core.waiting }

    /// Everything mutable, behind one lock. Callbacks never run while it is held.
    struct Shared {
        var origins: [String: Origin] = [:]
        /// Answers by HTTP version (as libcurl negotiated it).
        var answeredOverHTTP2 = 0
        var answeredOverHTTP1 = 0
    }

    /// One push service's state.
    struct Origin {
        let target: SenderTarget
        /// Empty when curl could not be set up (then `stop` is set).
        let transport: Transport?
        var stop: EndpointStop?
        /// Since when the origin has been unreachable (its first failed connect), nil while it answers.
        var unreachableSinceMs: Int64?
        /// The last header list, made for these headers and this VAPID authorization: a broadcast's requests share
        /// it within a second.
        var lastHeaders: (headers: WebPushHeaders, authorization: String, list: HeaderList)?
        /// The last collapse id sent here and its `Topic` (a broadcast's job id, derived with SHA-256).
        var lastTopic: (collapseId: String, topic: String)?
    }

    /// - Parameters:
    ///   - signer: the app's VAPID key and subject.
    ///   - service: browsers' push services (the allowed hosts) or UnifiedPush distributors (the exempt ones);
    ///     resolved addresses are judged by its rule before connecting.
    ///   - caFile: extra trust anchors (a self-hosted push service, the simulator); verification is always on.
    ///   - declarative: send Apple's Declarative Web Push form (``WebPushPayload``).
    ///   - http1Only: never offer HTTP/2 (a push service that mishandles it; tests of the HTTP/1.1 path).
    public init(
        signer: VAPIDSigner, service: Service, caFile: String? = nil, declarative: Bool = false,
        http1Only: Bool = false, configuration: SenderConfiguration = .init(), clock: SenderClock = SystemClock(),
        sleeper: Sleeper = TaskSleeper(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "PushSender.WebPush")
    ) throws(SenderError) {
        guard CurlGlobal.initialized else { throw SenderError(.transport, "curl_global_init failed") }
        self.signer = signer
        self.service = service
        self.caFile = caFile
        self.declarative = declarative
        self.http1Only = http1Only
        self.configuration = configuration
        core = SenderCore(
            configuration: configuration, metrics: metrics, clock: clock, sleeper: sleeper, random: random, logger: logger)
    }

    /// A sender whose VAPID key is the PEM file at `vapidKeyPath` (refused like every secret file when others can read
    /// it) and whose contact is `subject`; the rest as ``init(signer:service:caFile:declarative:http1Only:configuration:clock:sleeper:random:logger:)``.
    public convenience init(
        vapidKeyPath: String, subject: String, service: Service, caFile: String? = nil, declarative: Bool = false,
        configuration: SenderConfiguration = .init(), logger: Logger = Logger(label: "PushSender.WebPush")
    ) throws(SenderError) {
        let signer: VAPIDSigner
        do {
            signer = try VAPIDSigner(pemPath: vapidKeyPath, subject: subject)
        } catch {
            throw SenderError(.unknown("credentials"), error.message)
        }
        try self.init(
            signer: signer, service: service, caFile: caFile, declarative: declarative, configuration: configuration, logger: logger)
    }

    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let job = core.start(item, onResult: onResult, onPruneReleased: onPruneReleased)
        guard let subscription = item.webPush else {
            finish(job, status: 0, reason: "not a web device: the item has no Web Push subscription", kind: .rejected)
            return
        }
        let request = item.request
        let plaintext: [UInt8]
        let unifiedPush = service.pushService == .unifiedpush
        switch templates.withLock({
            $0.mapping(
                payload: request.payload, pushType: request.pushType, collapseId: request.collapseId, declarative: declarative,
                unifiedPush: unifiedPush)
        }) {
        case .skip(let reason):
            finish(job, status: 0, reason: reason, kind: .rejected)
            return
        case .send(let template):
            plaintext = template.message(id: request.notificationId)
        }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(plaintext, for: WebPushEncryption.RecipientKeys(subscription))
        } catch {
            finish(job, status: 0, reason: error.message, kind: .rejected)
            return
        }
        job.prepared = PreparedRequest(url: subscription.endpoint.url, headers: HeaderList(), body: body)
        dispatch(job)
    }

    public var summary: SendSummary { core.summary }

    /// Answers received over HTTP/2 and over HTTP/1.1 so far: which the push services offered (ALPN).
    public var answersByHTTPVersion: (http2: Int, http1: Int) {
        shared.withLock { ($0.answeredOverHTTP2, $0.answeredOverHTTP1) }
    }

    /// Web Push has no BadDeviceToken to hold back: no pruning breaker.
    public var breakerStates: [String: PruningBreaker.State] { [:] }
    public var trippedEndpoints: [String] { [] }

    public var endpointConditions: [EndpointCondition] {
        shared.withLock { s in
            s.origins.map { origin, o in
                EndpointCondition(
                    endpoint: origin, reachable: o.unreachableSinceMs == nil && o.stop == nil, stopped: o.stop != nil,
                    breakerTripped: false)
            }.sorted { $0.endpoint < $1.endpoint }
        }
    }

    /// Origins stopped by an outage get a fresh chance; credential stops stay (the key or subject must change).
    public func beginRun() {
        waiting.beginRun()
        shared.withLock { s in
            for (origin, var o) in s.origins where o.stop?.kind == .outage {
                o.stop = nil
                o.unreachableSinceMs = nil
                s.origins[origin] = o
            }
        }
    }

    public func abandonWaiting(_ reason: String) {
        for job in waiting.abandonAll() {
            let origin = job.item.webPush?.endpoint.origin ?? "web push"
            finish(job, status: 0, reason: nil, kind: .unsent, stop: EndpointStop(.stopping, endpoint: origin, message: reason))
        }
    }

    /// Nothing is held across a run (no breaker): nothing to discard.
    @discardableResult public func endRun() -> Int { 0 }

    public func shutdown() async {
        abandonWaiting("the sender is shutting down")
        let transports = shared.withLock { s in s.origins.values.compactMap(\.transport) }
        for transport in transports { await transport.stop() }
    }
}
