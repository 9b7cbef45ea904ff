import Foundation
import PushCore

/// The simulator's UnifiedPush distributor: its push server (UnifiedPush SERV_1.2.0) and, in place of the Android
/// distributor app, what that app gives the connector library (AND_3.0.0: an endpoint and the RFC 8291 keys the
/// messages are encrypted for). Its endpoints are push resources of the Web Push service's store
/// (``WebPushSubscriptionStore/Kind/unifiedPush``), checked with the same VAPID verifier and decryptor.
///
/// Routes: `POST /up/register` (a new endpoint, optionally restricted to a VAPID key by `{"vapid": KEY}`),
/// `GET /up/<id>` (discovery), `DELETE /up/<id>` (unregister: later pushes answer 404) and `POST /up/<id>` (a push).
final class UnifiedPushDistributor: Sendable {
    typealias Response = WebPushService.Response

    static let registerPath = "/up/register"
    /// SERV_1.2.0's discovery answer, exactly.
    static let discoveryBody = Array(#"{"unifiedpush":{"version":1}}"#.utf8)

    /// The Web Push service whose store, origin and refusals it shares.
    private let webPush: WebPushService
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64

    init(webPush: WebPushService, recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64) {
        self.webPush = webPush
        self.recorder = recorder
        self.clock = clock
    }

    /// True for the paths this distributor answers.
    static func handles(path: String?) -> Bool { path?.hasPrefix("/up/") ?? false }

    /// True for a push (`POST /up/<id>`): the requests the delay fault holds, a slow distributor's answers.
    static func isPush(method: String?, path: String?) -> Bool {
        method == "POST" && handles(path: path) && path != registerPath
    }

    /// Registers an endpoint on the simulator's own origin.
    func register(applicationServerKey: [UInt8]?) -> MintedSubscription {
        webPush.subscriptions.mint(origin: webPush.defaultOrigin(), applicationServerKey: applicationServerKey, kind: .unifiedPush)
    }

    /// Unregisters an endpoint: its pushes answer 404. False when there is no such endpoint.
    @discardableResult
    func unregister(id: String) -> Bool { webPush.subscriptions.expire(id, kind: .unifiedPush) }

    /// Answers one complete request; `chance` draws the fault dice, `cache` holds the connection's last VAPID header
    /// that verified.
    func respond(
        to request: RequestValidator.Head, body: [UInt8], faults: SimulatorFaults, chance: (Double) -> Bool,
        cache: inout VAPIDVerifier.Verified?
    ) -> Response {
        let path = request.path ?? ""
        if path == Self.registerPath { return registerRequest(request, body: body) }
        let id = String(path.dropFirst("/up/".count))
        switch request.method {
        case "GET": return discover(id: id)
        case "DELETE": return unregisterRequest(id: id)
        case "POST": break
        default:
            return webPush.reject(.init(.methodNotAllowed, "an endpoint takes GET, POST or DELETE, not \(request.method ?? "nothing")"))
        }
        // An overloaded push server answers before looking at the request, as the Web Push service does.
        if chance(faults.tooManyRequestsFraction) {
            return webPush.reject(.init(.tooManyRequests, "too many requests (simulated)"), retryAfter: true)
        }
        if chance(faults.serviceUnavailableFraction) {
            return webPush.reject(.init(.serviceUnavailable, "service unavailable (simulated)"), retryAfter: true)
        }
        switch accept(request, id: id, body: body, cache: &cache) {
        case .failure(let rejection):
            return webPush.reject(rejection)
        case .success(let (message, origin)):
            recorder.answered(unifiedPush: message)
            // SERV_1.2.0: 201 and `TTL: 0`, a distributor keeps nothing.
            return Response(status: 201, headers: [
                ("location", origin + "/m/" + message.messageId), ("ttl", "0"), ("content-length", "0"),
            ])
        }
    }

    /// SERV_1.2.0, AND_3.0.0 and the Web Push rules they build on, in the order they are reported: the endpoint, the
    /// headers, VAPID (required for an endpoint registered with a key, verified whenever present), RFC 8030's
    /// headers (TTL optional), the size, the content coding, then the body itself.
    private func accept(
        _ request: RequestValidator.Head, id: String, body: [UInt8], cache: inout VAPIDVerifier.Verified?
    ) -> Result<(ReceivedUnifiedPush, String), WebPushRejection> {
        guard let entry = webPush.subscriptions.entry(id, kind: .unifiedPush) else {
            return .failure(.init(.notFound, "no UnifiedPush endpoint \(id)"))
        }
        // SERV_1.2.0 answers a gone endpoint 404 (Web Push's 410).
        if entry.expired { return .failure(.init(.notFound, "UnifiedPush endpoint \(id) was unregistered")) }
        if request.duplicate { return .failure(.init(.duplicateHeaders, "a header appears more than once")) }
        let now = clock()
        var verified: VAPIDVerifier.Verified? = nil
        if request.authorization != nil || entry.applicationServerKey != nil {
            switch webPush.vapid(request, entry: entry, nowMs: now, cache: &cache) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let checked): verified = checked
            }
        }
        let ttl: Int?
        switch WebPushService.pushHeaders(request) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let seconds): ttl = seconds
        }
        guard !body.isEmpty else {
            return .failure(.init(.payloadEmpty, "a UnifiedPush message is 1-4096 bytes (SERV_1.2.0); this one has no body"))
        }
        guard body.count <= WebPushService.maximumBodyBytes else {
            return .failure(.init(
                .payloadTooLarge, "the body is \(body.count) bytes; at most \(WebPushService.maximumBodyBytes) (SERV_1.2.0)"))
        }
        guard request.contentEncoding?.lowercased() == "aes128gcm" else {
            return .failure(.init(
                .encryptionRequired,
                "Content-Encoding must be aes128gcm: AND_3.0.0 requires RFC 8291 encryption, not \(request.contentEncoding.map { "`\($0)`" } ?? "a missing Content-Encoding")"))
        }
        let plaintext: [UInt8]
        do {
            plaintext = try WebPushDecryptor.decrypt(body: body, privateKey: entry.privateKey, authSecret: entry.authSecret)
        } catch {
            return .failure(.init(.decryptionFailed, "the body does not decrypt with the endpoint's keys: \(error.description)"))
        }
        let message = ReceivedUnifiedPush(
            subscriptionId: id, plaintext: plaintext, ttl: ttl, urgency: request.urgency, topic: request.webPushTopic,
            subject: verified?.subject, vapidKey: verified.map { StrictBase64URL.encode($0.key) },
            messageId: UUID().uuidString.lowercased(), receivedAtMs: now)
        return .success((message, entry.subscription.origin))
    }

    /// `POST /up/register`: a new endpoint on the origin the request was sent to, answered with what a connector
    /// library gives the app.
    private func registerRequest(_ request: RequestValidator.Head, body: [UInt8]) -> Response {
        guard request.method == "POST" else {
            return webPush.reject(.init(.methodNotAllowed, "\(Self.registerPath) takes POST, not \(request.method ?? "nothing")"))
        }
        let key: [UInt8]?
        switch WebPushService.applicationServerKey(options: body) {
        case .failure(let rejection): return webPush.reject(rejection)
        case .success(let bytes): key = bytes
        }
        let endpoint = webPush.subscriptions.mint(origin: webPush.origin(of: request), applicationServerKey: key, kind: .unifiedPush)
        recorder.answered(status: 201, reasonText: nil)
        let json = Array(endpoint.connectorJSON.utf8)
        return Response(status: 201, headers: [
            ("location", endpoint.endpoint), ("content-type", "application/json"), ("content-length", String(json.count)),
        ], body: json)
    }

    /// `GET /up/<id>`: SERV_1.2.0's discovery, for every endpoint it registered (unregistered ones too).
    private func discover(id: String) -> Response {
        guard webPush.subscriptions.entry(id, kind: .unifiedPush) != nil else {
            return webPush.reject(.init(.notFound, "no UnifiedPush endpoint \(id)"))
        }
        recorder.answered(status: 200, reasonText: nil)
        return Response(status: 200, headers: [
            ("content-type", "application/json"), ("content-length", String(Self.discoveryBody.count)),
        ], body: Self.discoveryBody)
    }

    /// `DELETE /up/<id>`: the endpoint is gone.
    private func unregisterRequest(id: String) -> Response {
        guard unregister(id: id) else { return webPush.reject(.init(.notFound, "no UnifiedPush endpoint \(id)")) }
        recorder.answered(status: 204, reasonText: nil)
        return Response(status: 204)
    }
}
