import PushSimulator
import Crypto
import Foundation
import PushCore
import PushSender
import Testing
import class TestSupport.RecordingListener

/// The Web Push sender against the simulator's strict Web Push service, over TLS on real sockets: the simulator
/// verifies VAPID, requires TTL, checks Urgency and Topic, decrypts each body and records its plaintext.
@Suite struct WebPushSenderTests {
    nonisolated(unsafe) static let vapidKey = P256.Signing.PrivateKey()
    static let subject = "mailto:ops@example.com"

    /// A harness the Web Push service accepts (no client certificate).
    static func harness(faults: SimulatorFaults = .init()) async throws -> SimulatorHarness {
        try await SimulatorHarness(faults: faults, clientAuth: .either)
    }

    static func sender(
        caFile: String, allowed: [String], http1Only: Bool = false, declarative: Bool = false,
        signer: VAPIDSigner? = nil, configuration: SenderConfiguration = .init(backoffBaseMs: 50)
    ) throws -> WebPushSender {
        try WebPushSender(
            signer: signer ?? VAPIDSigner(key: vapidKey, subject: subject),
            service: .webPush(WebPushHostPolicy(allowedHosts: allowed)), caFile: caFile, declarative: declarative,
            http1Only: http1Only, configuration: configuration)
    }

    /// A notification for a minted subscription, in the APNs form the engine prepares.
    static func item(
        _ minted: MintedSubscription, _ index: Int, collapseId: String? = "job-0f9c2a7e-5b1d-4c3e-8a6f-2d4b6c8e0a1b",
        priority: PushPriority = .immediate, expiration: Int64? = nil, pushType: PushType = .alert,
        payload: String? = nil, host: String? = nil, url: String? = nil
    ) throws -> SendItem {
        let url = url ?? host.map { minted.endpoint.replacingOccurrences(of: "127.0.0.1", with: $0) } ?? minted.endpoint
        let endpoint = try WebPushEndpoint(parsing: url)
        let subscription = try WebPushSubscription(
            endpoint: endpoint, p256dh: Base64URL.decode(minted.p256dh)!, auth: Base64URL.decode(minted.auth)!)
        let json = payload ?? #"{"aps":{"alert":{"title":"Hello \#(index)","body":"Grüße 🍉"},"sound":"default","badge":\#(index)},"url":"https://shop.example/\#(index)","orderId":\#(index)}"#
        let request = NotificationRequest(
            token: testToken(index), topic: "web", pushType: pushType, priority: priority, expiration: expiration,
            collapseId: collapseId, notificationId: NotificationID.random(), payload: Array(json.utf8))
        return SendItem(request, webPush: subscription)
    }

    /// What the simulator must have decrypted for `item`.
    static func expected(_ item: SendItem, declarative: Bool = false) -> String? {
        let r = item.request
        guard case .send(let bytes) = WebPushPayload.map(
            apnsPayload: r.payload, pushType: r.pushType, id: r.notificationId, collapseId: r.collapseId, declarative: declarative)
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func sendAll(_ sender: WebPushSender, _ items: [SendItem]) async -> [DeliveryResult] {
        await withTaskGroup(of: DeliveryResult.self) { group in
            for item in items { group.addTask { await sender.send(item) } }
            var results: [DeliveryResult] = []
            for await r in group { results.append(r) }
            return results
        }
    }

    @Test(arguments: [false, true])
    func aBatchIsDecryptedExactlyOnceWithItsHeadersOneVAPIDTokenAndTheNegotiatedHTTPVersion(http1Only: Bool) async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let signer = try VAPIDSigner(key: Self.vapidKey, subject: Self.subject)
        let sender = try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"], http1Only: http1Only, signer: signer)
        let key = Array(Self.vapidKey.publicKey.x963Representation)
        let expiration = Int64(Date().timeIntervalSince1970) + 3600
        var items: [SendItem] = []
        for i in 0..<60 {
            items.append(try Self.item(
                h.simulator.mintWebPushSubscription(applicationServerKey: i % 2 == 0 ? key : nil), i,
                priority: i % 3 == 0 ? .low : .immediate, expiration: i % 5 == 0 ? nil : expiration))
        }
        let results = await Self.sendAll(sender, items)
        await sender.shutdown()
        // The TTL is what was left of the hour when each was sent: at most 3600, at least what was left once every
        // answer was in (a loaded machine may take many seconds between the two; a fixed tolerance would flake).
        let leftAtTheEnd = Int(expiration - Int64(Date().timeIntervalSince1970)) - 1
        #expect(results.count == 60)
        #expect(results.allSatisfy { $0.kind == .accepted && $0.status == 201 }, "\(results.filter { !$0.isAccepted })")
        let received = h.simulator.receivedWebPushes
        #expect(received.count == 60)
        let subscriptionIds = h.simulator.webPushSubscriptions.map(\.id)
        for (index, item) in items.enumerated() {
            let id = try #require(item.webPush?.endpoint.url.split(separator: "/").last.map(String.init))
            #expect(subscriptionIds.contains(id))
            let got = received.filter { $0.subscriptionId == id }
            try #require(got.count == 1, "subscription \(index) received \(got.count) times")
            #expect(got[0].text == Self.expected(item))
            #expect(got[0].urgency == (index % 3 == 0 ? "low" : "high"))
            #expect(got[0].topic == WebPushHeaders.derivedTopic("job-0f9c2a7e-5b1d-4c3e-8a6f-2d4b6c8e0a1b"))
            if index % 5 == 0 {
                #expect(got[0].ttl == Int(WebPushHeaders.defaultTTL))
            } else {
                #expect((leftAtTheEnd...3600).contains(got[0].ttl), "ttl \(got[0].ttl), at least \(leftAtTheEnd)")
            }
            #expect(got[0].subject == Self.subject && got[0].vapidKey == signer.publicKey)
        }
        #expect(signer.tokensSigned == 1, "one VAPID token for the origin, reused for every notification")
        let versions = sender.answersByHTTPVersion
        #expect(http1Only ? (versions.http1 == 60 && versions.http2 == 0) : (versions.http2 == 60 && versions.http1 == 0))
        #expect(sender.summary.accepted == 60 && sender.summary.finished == 60)
    }

    @Test func anExpiredSubscriptionIsTokenDeadAndPrunedUnconditionally() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let sender = try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"])
        let live = h.simulator.mintWebPushSubscription()
        let gone = h.simulator.mintWebPushSubscription()
        #expect(h.simulator.expireWebPushSubscription(id: gone.id))
        let results = await Self.sendAll(sender, [try Self.item(live, 1), try Self.item(gone, 2)])
        await sender.shutdown()
        let dead = try #require(results.first { $0.token == testToken(2) })
        #expect(dead.kind == .tokenDead && dead.status == 410)
        #expect(results.allSatisfy { $0.service == .webpush }, "the history and the webhook say which service answered")
        guard case .delete(let prune) = dead.prune else {
            Issue.record("no prune: \(dead.prune)")
            return
        }
        #expect(prune.verdict.prunes && prune.apnsTimestampMs == nil)
        #expect(results.first { $0.token == testToken(1) }?.kind == .accepted)
        #expect(h.simulator.receivedWebPushes.map(\.subscriptionId) == [live.id])
    }

    @Test func tooManyRequestsAndServiceUnavailableAreRetriedThenAccepted() async throws {
        let h = try await Self.harness(faults: SimulatorFaults(tooManyRequestsFraction: 0.2, serviceUnavailableFraction: 0.2))
        defer { Task { await h.stop() } }
        let sender = try Self.sender(
            caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"],
            configuration: SenderConfiguration(maxAttempts: 20, backoffBaseMs: 20, backoffCapMs: 100))
        let items = try (0..<30).map { try Self.item(h.simulator.mintWebPushSubscription(), $0) }
        let results = await Self.sendAll(sender, items)
        await sender.shutdown()
        #expect(results.allSatisfy { $0.isAccepted }, "\(results.filter { !$0.isAccepted })")
        #expect(sender.summary.retried > 0)
        #expect(results.contains { $0.attempts > 1 })
        let counts = Dictionary(grouping: h.simulator.receivedWebPushes, by: \.subscriptionId).mapValues(\.count)
        #expect(counts.count == 30 && counts.values.allSatisfy { $0 == 1 })
        #expect((h.simulator.counters.byStatus[429] ?? 0) + (h.simulator.counters.byStatus[503] ?? 0) == sender.summary.retried)
    }

    @Test func aRefusedVAPIDTokenStopsThatOriginOnlyAndAnotherOriginKeepsWorking() async throws {
        // Two origins on one simulator: https://localhost:PORT and https://127.0.0.1:PORT. The simulator minted every
        // subscription for https://127.0.0.1:PORT, so a token whose aud is https://localhost:PORT is refused (403
        // BadJwtToken): that origin stops; the other goes on (its own transport, state and token).
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let sender = try Self.sender(caFile: h.caFile, allowed: ["localhost:\(h.port)", "127.0.0.1:\(h.port)"])
        var items: [SendItem] = []
        for i in 0..<10 { items.append(try Self.item(h.simulator.mintWebPushSubscription(), i, host: "localhost")) }
        for i in 10..<30 { items.append(try Self.item(h.simulator.mintWebPushSubscription(), i)) }
        let results = await Self.sendAll(sender, items)
        await sender.shutdown()
        let refusedOrigin = "https://localhost:\(h.port)"
        let workingOrigin = "https://127.0.0.1:\(h.port)"
        let refusedTokens = Set(items.prefix(10).map(\.request.token))
        let fromRefused = results.filter { refusedTokens.contains($0.token) }
        #expect(fromRefused.count == 10 && fromRefused.allSatisfy { $0.kind == .unsent && $0.stop?.kind == .credentials })
        #expect(fromRefused.allSatisfy { $0.stop?.endpoint == refusedOrigin })
        let message = fromRefused.first?.stop?.message ?? ""
        #expect(message.contains("403") && message.contains("BadJwtToken") && message.contains(refusedOrigin), "\(message)")
        #expect(sender.summary.stops.map(\.endpoint) == [refusedOrigin])
        let fromWorking = results.filter { !refusedTokens.contains($0.token) }
        #expect(fromWorking.count == 20 && fromWorking.allSatisfy { $0.isAccepted })
        #expect(h.simulator.receivedWebPushes.count == 20)
        let conditions = Dictionary(uniqueKeysWithValues: sender.endpointConditions.map { ($0.endpoint, $0.stopped) })
        #expect(conditions == [refusedOrigin: true, workingOrigin: false])
    }

    @Test func aPrivateAddressNotListedIsRefusedAtSendTimeBeforeConnecting() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        // `localhost` is a name: its address is known only once resolved, and 127.0.0.1 is loopback.
        let item = try Self.item(h.simulator.mintWebPushSubscription(), 1, host: "localhost")
        let refusing = try Self.sender(caFile: h.caFile, allowed: ["*.localhost.example:\(h.port)"])
        let refused = await refusing.send(item)
        await refusing.shutdown()
        #expect(refused.kind == .rejected && refused.status == 0)
        #expect(refused.reason == .unknown("AddressRefused") && refused.error?.contains("loopback address; refused") == true, "\(refused)")
        #expect(h.simulator.counters.connections == 0, "no connection was opened")
        #expect(h.simulator.receivedWebPushes.isEmpty)
        // Listed exactly, the operator's choice: it connects, and the service answers (403: the simulator minted the
        // subscription for https://127.0.0.1:PORT, so a token for https://localhost:PORT has the wrong aud).
        let allowing = try Self.sender(caFile: h.caFile, allowed: ["localhost:\(h.port)"])
        let sent = await allowing.send(item)
        await allowing.shutdown()
        #expect(sent.status == 403, "\(sent)")
        #expect(h.simulator.counters.connections >= 1)
    }

    /// The address check holds for every connection libcurl makes to the push service itself, whatever the proxy
    /// variables say: `NO_PROXY` naming the host, an empty `HTTPS_PROXY`, `NO_PROXY=*` and `ALL_PROXY` with
    /// `NO_PROXY` all connect directly, so the address is judged and refused by name, and no byte reaches the
    /// service. (Before, any `HTTPS_PROXY` in the environment turned the check off, and `ALL_PROXY` was not counted
    /// as a proxy: its address was judged as the push service's.)
    @Test func theAddressCheckHoldsForEveryDirectConnectionWhateverTheProxyVariables() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let item = try Self.item(h.simulator.mintWebPushSubscription(), 1, host: "localhost")
        let environments: [[String: String]] = [
            ["HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "localhost"],
            ["HTTPS_PROXY": ""],
            ["https_proxy": "http://127.0.0.1:9", "no_proxy": "*"],
            ["ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "example.org,localhost"],
        ]
        for environment in environments {
            var configuration = SenderConfiguration(backoffBaseMs: 50)
            configuration.proxyEnvironment = ProxyEnvironment(environment)
            let sender = try Self.sender(caFile: h.caFile, allowed: ["*.localhost.example:\(h.port)"], configuration: configuration)
            let refused = await sender.send(item)
            await sender.shutdown()
            #expect(refused.kind == .rejected && refused.reason == .unknown("AddressRefused"), "\(environment): \(refused)")
            #expect(refused.error?.contains("https://localhost:\(h.port) resolved to") == true && refused.error?.contains("which is a loopback address; refused") == true, "\(environment): \(refused)")
        }
        #expect(h.simulator.counters.connections == 0, "no connection reached the push service")

        // ALL_PROXY alone is a proxy: libcurl's one connection is to it (here a stand-in refusing every CONNECT),
        // the push service sees nothing, and the failure names the variable, never the proxy's URL.
        let proxy = try RecordingListener()
        defer { proxy.stop() }
        var configuration = SenderConfiguration(maxAttempts: 1, outageLimitMs: 2000, backoffBaseMs: 50)
        configuration.proxyEnvironment = ProxyEnvironment(["ALL_PROXY": "http://127.0.0.1:\(proxy.port)"])
        let proxied = try Self.sender(caFile: h.caFile, allowed: ["*.localhost.example:\(h.port)"], configuration: configuration)
        let result = await proxied.send(item)
        await proxied.shutdown()
        #expect(!result.isAccepted && result.reason != .unknown("AddressRefused"), "\(result)")
        #expect(proxy.received.first?.hasPrefix("CONNECT localhost:\(h.port) HTTP/1.1") == true, "\(proxy.received)")
        #expect(h.simulator.counters.connections == 0)
        #expect(h.simulator.receivedWebPushes.isEmpty)
    }

    @Test func silentTooLargeAndNonWebItemsAreRejectedBeforeSending() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let sender = try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"])
        let silent = await sender.send(try Self.item(
            h.simulator.mintWebPushSubscription(), 1, pushType: .background, payload: #"{"aps":{"content-available":1}}"#))
        #expect(silent.kind == .rejected && silent.status == 0 && silent.error == WebPushPayload.silentReason)
        let big = String(repeating: "x", count: 5000)
        let tooLarge = await sender.send(try Self.item(
            h.simulator.mintWebPushSubscription(), 2, payload: #"{"aps":{"alert":"\#(big)"}}"#))
        #expect(tooLarge.kind == .rejected && tooLarge.status == 0)
        #expect(tooLarge.error?.contains("at most \(WebPushEncryption.maximumPlaintextLength)") == true, "\(tooLarge)")
        var apnsItem = try Self.item(h.simulator.mintWebPushSubscription(), 3)
        apnsItem.webPush = nil
        #expect(await sender.send(apnsItem).kind == .rejected)
        await sender.shutdown()
        #expect(h.simulator.receivedWebPushes.isEmpty)
        #expect(sender.summary.rejected == 3)
    }

    @Test func theDeclarativeFormIsWhatTheServiceDecrypts() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let sender = try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"], declarative: true)
        let item = try Self.item(h.simulator.mintWebPushSubscription(), 7)
        let result = await sender.send(item)
        await sender.shutdown()
        #expect(result.isAccepted)
        let text = try #require(h.simulator.receivedWebPushes.first?.text)
        #expect(text == Self.expected(item, declarative: true))
        #expect(text.hasPrefix(#"{"web_push":8030,"notification":{"title":"Hello 7""#))
    }

    @Test func theRouterSendsEachItemToItsServiceAndRefusesAMissingOne() async throws {
        let h = try await Self.harness()
        defer { Task { await h.stop() } }
        let web = try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"])
        let apns = try APNsSender(target: h.target(), credentials: FixedCertificate(tlsIdentity: h.clientIdentity()))
        let router = ServiceRouter(apns: apns, webPush: web)
        func send(_ router: ServiceRouter, _ item: SendItem) async -> DeliveryResult {
            await withCheckedContinuation { c in router.submit(item) { c.resume(returning: $0) } }
        }
        let webItem = try Self.item(h.simulator.mintWebPushSubscription(), 1)
        let apnsItem = SendItem(h.request(testToken(2)))
        let sentWeb = await send(router, webItem)
        let sentAPNs = await send(router, apnsItem)
        #expect(sentWeb.isAccepted && sentWeb.status == 201)
        #expect(sentAPNs.isAccepted && sentAPNs.status == 200)
        #expect(sentWeb.service == .webpush && sentAPNs.service == .apns)
        #expect(h.simulator.receivedWebPushes.count == 1 && h.simulator.received.map(\.request.token) == [testToken(2)])
        #expect(router.summary.accepted == 2 && router.summary.finished == 2)
        #expect(router.endpointConditions.map(\.endpoint) == ["https://127.0.0.1:\(h.port)", "https://127.0.0.1:\(h.port)"])
        await router.shutdown()
        // An app with Web Push only: an APNs device is refused at once, naming the missing service; and the reverse.
        let webOnly = ServiceRouter(apns: nil, webPush: try Self.sender(caFile: h.caFile, allowed: ["127.0.0.1:\(h.port)"]))
        let noAPNs = await send(webOnly, apnsItem)
        #expect(noAPNs.kind == .rejected && noAPNs.status == 0 && noAPNs.error?.contains("no apns configuration") == true, "\(noAPNs)")
        let apnsOnly = ServiceRouter(apns: try APNsSender(target: h.target(), credentials: FixedCertificate(tlsIdentity: h.clientIdentity())), webPush: nil)
        let noWeb = await send(apnsOnly, webItem)
        #expect(noWeb.kind == .rejected && noWeb.error?.contains("no webpush configuration") == true, "\(noWeb)")
        #expect(noAPNs.service == .apns && noWeb.service == .webpush, "a refusal carries the item's service")
        #expect(webOnly.summary.rejected == 1 && apnsOnly.summary.rejected == 1)
        // A web device whose subscription could not be read goes by its service, never to APNs as a token.
        let unreadable = await send(apnsOnly, SendItem(h.request(testToken(3)), service: .webpush))
        #expect(unreadable.kind == .rejected && unreadable.error?.contains("no webpush configuration") == true, "\(unreadable)")
        let both = ServiceRouter(apns: try APNsSender(target: h.target(), credentials: FixedCertificate(tlsIdentity: h.clientIdentity())), webPush: web)
        let noSubscription = await send(both, SendItem(h.request(testToken(4)), service: .webpush))
        #expect(noSubscription.kind == .rejected && noSubscription.status == 0, "\(noSubscription)")
        #expect(unreadable.service == .webpush && noSubscription.service == .webpush)
        await both.shutdown()
        await webOnly.shutdown()
        await apnsOnly.shutdown()
        #expect(h.simulator.receivedWebPushes.count == 1 && h.simulator.received.count == 1)
    }
}
