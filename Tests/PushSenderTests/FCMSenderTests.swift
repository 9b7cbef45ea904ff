import PushSimulator
import Foundation
import PushCore
import PushSender
import Synchronization
import Testing
import func TestSupport.offThePool

/// The FCM sender against the real simulator over verified TLS: the mapping FCM receives, what each answer does to a
/// token, and the one shared access token.
@Suite(.timeLimit(.minutes(2)))
struct FCMSenderTests {
    /// A started simulator trusting a new development service account, and an FCM sender for it on `connections`
    /// connections whose access-token cache judges time by `now`.
    struct Rig {
        let harness: SimulatorHarness
        let sender: FCMSender
        let account: FCMServiceAccount

        init(
            faults: SimulatorFaults = .init(), lifetime: Int64 = 3599, connections: Int = 1, maxAttempts: Int = 5,
            simulatorClock: @escaping @Sendable () -> Int64 = SimulatorClock.systemMilliseconds,
            now: @escaping @Sendable () -> Date = { Date() }, configuration: SenderConfiguration? = nil,
            fcmForeignTokens: Set<String> = [], sleeper: Sleeper = TaskSleeper()
        ) async throws {
            harness = try await SimulatorHarness(
                faults: faults, clientAuth: .either, clock: simulatorClock, accessTokenLifetime: lifetime, fcmForeignTokens: fcmForeignTokens)
            let tokenURI = harness.simulator.tokenURI
            let (simulatorAccount, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: tokenURI) }
            try harness.simulator.trustServiceAccount(simulatorAccount)
            account = try FCMServiceAccount(json: Array(json.utf8), source: "dev.json")
            let tokens = AccessTokenCache(serviceAccount: account, caFile: harness.caFile, now: now)
            sender = try FCMSender(
                account: account, tokens: tokens, target: harness.target(),
                configuration: configuration ?? SenderConfiguration(connections: connections, maxAttempts: maxAttempts, backoffBaseMs: 50),
                sleeper: sleeper)
        }

        func stop() async {
            await sender.shutdown()
            await harness.stop()
        }
    }

    static func item(_ fcmToken: String, payload: String = #"{"aps":{"alert":{"title":"T","body":"B"}}}"#, index: Int = 0) -> SendItem {
        let request = NotificationRequest(
            token: testToken(index), topic: "com.example.app", pushType: .alert, priority: .immediate, notificationId: NotificationID.random(),
            payload: Array(payload.utf8))
        var item = SendItem(request, service: .fcm)
        item.registrationToken = fcmToken
        return item
    }

    @Test func anAcceptedMessageIsRecordedWithTheMapping() async throws {
        let rig = try await Rig()
        let token = PushSimulator.mintFCMToken()
        let result = await rig.sender.send(Self.item(token, payload: #"{"aps":{"alert":{"title":"Sale","body":"50% off"},"sound":"default"},"orderId":42,"channel_id":"deals"}"#))
        await rig.stop()
        #expect(result.kind == .accepted && result.status == 200 && result.service == .fcm)
        let received = try #require(rig.harness.simulator.receivedFCMMessages.first)
        #expect(received.token == token && received.projectId == rig.account.projectId)
        #expect(received.message["notification"]?["title"]?.stringValue == "Sale")
        #expect(received.message["data"]?["orderId"]?.stringValue == "42")
        #expect(received.message["android"]?["priority"]?.stringValue == "HIGH")
        #expect(received.message["android"]?["notification"]?["channel_id"]?.stringValue == "deals")
        #expect(rig.sender.tokens.grantsRequested == 1)
    }

    @Test func theRouterSendsFCMDevicesThroughTheSenderItsConfigurationBuilds() async throws {
        // apps.ID.fcm with endpoint "simulator": the sender posts grants to the simulator's /token (not the file's
        // token_uri) and messages to the simulator, trusting <certificates>/ca.pem.
        let harness = try await SimulatorHarness(clientAuth: .either)
        let (simulatorAccount, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: "https://oauth2.googleapis.com/token") }
        try harness.simulator.trustServiceAccount(simulatorAccount)
        let file = harness.dir + "/fcm.json"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(json.utf8), attributes: [.posixPermissions: 0o600]))
        let configuration = try PushConfiguration(json: Array("""
            {"database": "r.sqlite", "simulator": {"host": "127.0.0.1", "port": \(harness.port), "certificates": "\(harness.dir)"},
             "apps": {"example": {"topic": "com.example.app", "endpoint": "simulator", "auth": {"p8": "k.p8", "keyId": "ABC123DEFG", "teamId": "TEAM123456"},
                                  "fcm": {"serviceAccount": "\(file)", "endpoint": "simulator"}}}}
            """.utf8), baseDirectory: harness.dir, zones: .foundation())
        let fcm = try #require(try configuration.app("example").fcm)
        let sender = try FCMSender.forApp(fcm, in: configuration)
        #expect(sender.account.tokenURI == "https://127.0.0.1:\(harness.port)/token")
        let router = ServiceRouter(apns: nil, webPush: nil, fcm: sender)
        let token = PushSimulator.mintFCMToken()
        let result = await withCheckedContinuation { (c: CheckedContinuation<DeliveryResult, Never>) in
            router.submit(Self.item(token)) { c.resume(returning: $0) }
        }
        await router.shutdown()
        await harness.stop()
        #expect(result.kind == .accepted && result.service == .fcm, "\(result)")
        #expect(harness.simulator.receivedFCMMessages.map(\.token) == [token])
        #expect(router.summary.accepted == 1)
    }

    @Test func anUnregisteredTokenIsDeadAndPruned() async throws {
        let rig = try await Rig()
        let token = PushSimulator.mintFCMToken()
        rig.harness.simulator.unregisterFCMToken(token)
        let result = await rig.sender.send(Self.item(token))
        await rig.stop()
        #expect(result.kind == .tokenDead && result.status == 404 && result.reason?.rawValue == "UNREGISTERED")
        guard case .delete(let prune) = result.prune else { Issue.record("not pruned: \(result.prune)"); return }
        // The prune names FCM's own code, never an APNs reason.
        #expect(prune.reason == "UNREGISTERED" && prune.counterReason == "UNREGISTERED")
    }

    @Test func aMalformedTokenIsDeadAndItsPruneHeldUntilFCMProvesHealthy() async throws {
        // An invalid token is a suspect answer (FCMSenderBreakerTests): with no evidence yet the breaker holds its
        // prune, and `endRun` discards it.
        let rig = try await Rig()
        let result = await rig.sender.send(Self.item("not-a-token"))
        #expect(rig.sender.endRun() == 1)
        await rig.stop()
        #expect(result.kind == .tokenDead && result.status == 400 && result.reason?.rawValue == "INVALID_ARGUMENT")
        #expect(result.prune == .held, "\(result.prune)")
    }

    @Test func aPayloadErrorIsPermanentAndNeverPrunes() async throws {
        let rig = try await Rig()
        // `from` is a data key FCM reserves: the message is refused, the token is fine.
        let result = await rig.sender.send(Self.item(PushSimulator.mintFCMToken(), payload: #"{"aps":{"alert":"Hi"},"from":"me"}"#))
        await rig.stop()
        #expect(result.kind == .rejected && result.status == 400 && result.reason?.rawValue == "INVALID_ARGUMENT")
        #expect(result.prune == .none && result.error?.contains("from") == true)
    }

    @Test func appleOnlyPushTypesAreRejectedUnsent() async throws {
        let rig = try await Rig()
        var item = Self.item(PushSimulator.mintFCMToken())
        item.request.pushType = .voip
        let result = await rig.sender.send(item)
        await rig.stop()
        #expect(result.kind == .rejected && result.status == 0 && result.error?.contains("FCM has no voip push") == true)
        #expect(rig.harness.simulator.receivedFCMMessages.isEmpty && rig.sender.tokens.grantsRequested == 0)
    }

    @Test func aRefusedGrantStopsFCMNamingTheTokenEndpointsDescription() async throws {
        let rig = try await Rig()
        // A service account the simulator never issued: its grant is refused.
        let (_, json) = try await offThePool { try SimulatorServiceAccount.makeDevelopment(tokenURI: rig.harness.simulator.tokenURI) }
        let stranger = try FCMServiceAccount(json: Array(json.utf8), source: "other.json")
        let sender = try FCMSender(
            account: stranger, tokens: AccessTokenCache(serviceAccount: stranger, caFile: rig.harness.caFile), target: rig.harness.target())
        let first = await sender.send(Self.item(PushSimulator.mintFCMToken()))
        let second = await sender.send(Self.item(PushSimulator.mintFCMToken()))
        await sender.shutdown()
        await rig.stop()
        #expect(first.kind == .unsent && first.stop?.kind == .credentials)
        #expect(first.stop?.message.contains("refused the grant") == true, "\(first.stop?.message ?? "")")
        #expect(first.stop?.message.contains("invalid_grant") == true)
        #expect(second.kind == .unsent && sender.summary.stops.count == 1)
        #expect(rig.harness.simulator.receivedFCMMessages.isEmpty)
    }

    @Test func aRefusedAccessTokenIsRenewedOnceAndTheSendRetried() async throws {
        // FCM's clock jumps two minutes ahead of the sender's: the 60 s token the cache still holds as fresh has
        // expired at FCM, which answers 401 UNAUTHENTICATED; the sender reports the token, gets a new one and resends.
        let offsetMs = Atomic<Int64>(0)
        let rig = try await Rig(lifetime: 60, simulatorClock: { SimulatorClock.systemMilliseconds() + offsetMs.load(ordering: .relaxed) })
        let first = await rig.sender.send(Self.item(PushSimulator.mintFCMToken()))
        offsetMs.store(120_000, ordering: .relaxed)
        let second = await rig.sender.send(Self.item(PushSimulator.mintFCMToken()))
        await rig.stop()
        #expect(first.kind == .accepted && first.attempts == 1)
        #expect(second.kind == .accepted && second.attempts == 2, "\(second)")
        #expect(rig.sender.tokens.grantsRequested == 2 && rig.harness.simulator.accessTokensGranted == 2)
    }

    /// Moves a clock by every delay the sender waits, at once.
    struct AdvancingSleeper: Sleeper {
        let clock: FCMTokenGrantTests.Clock
        func sleep(milliseconds: Int) async {
            clock.advance(seconds: Double(milliseconds) / 1000)
            await Task.yield()
        }
    }

    /// A grant the token endpoint does not answer in time (libcurl's timeout: a loaded test process's simulator once
    /// took over 10 s) is no credential failure: the sends wait as for an unreachable host, and the grant is asked
    /// again once the cache's backoff has passed by its clock, which the sender's waits move here. Both requests count,
    /// the first as failed: requested minus failed is the one token granted and sent with.
    @Test func aGrantThatTimesOutIsAskedAgainAfterTheBackoffAndCountedAsFailed() async throws {
        let rig = try await Rig()
        let clock = FCMTokenGrantTests.Clock()
        let asked = Atomic(0)
        let account = rig.account, caFile = rig.harness.caFile
        let tokens = AccessTokenCache(now: { clock.date }) {
            if asked.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                throw TransportError(code: 28, message: "Operation timed out after 10000 milliseconds with 0 bytes received")
            }
            return try await AccessTokenCache.requestGrant(account: account, issuedAt: Date(), caFile: caFile)
        }
        let sender = try FCMSender(account: account, tokens: tokens, target: rig.harness.target(), sleeper: AdvancingSleeper(clock: clock))
        let results = await withTaskGroup(of: DeliveryResult.self) { group in
            for i in 0..<5 { group.addTask { await sender.send(Self.item(PushSimulator.mintFCMToken(), index: i)) } }
            return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
        }
        let stops = sender.summary.stops
        await sender.shutdown()
        await rig.stop()
        #expect(results.count == 5 && results.allSatisfy(\.isAccepted), "\(results)")
        #expect(stops.isEmpty, "\(stops)")
        // The real grant that follows may time out too on a loaded machine: then it counts as one more failure.
        #expect(tokens.grantsRequested == asked.load(ordering: .sequentiallyConsistent))
        #expect(tokens.grantsFailed >= 1 && tokens.grantsRequested - tokens.grantsFailed == 1,
                "\(tokens.grantsRequested) grants, \(tokens.grantsFailed) failed")
        #expect(rig.harness.simulator.accessTokensGranted >= 1 && rig.harness.simulator.fcmMessagesAccepted == 5)
    }

    /// A notification that waits out a retry can meet an expiring token a second time (CI, 2026-11-29: 6 s tokens,
    /// 429s, one job refused twice stopped FCM for the whole app and interrupted the broadcast). A 401 for a token
    /// that has lived half its lifetime is an expiry race, renewed again; only a young token refused after a
    /// renewal is a refusal of the credentials (next test).
    @Test func aTokenThatExpiresAgainWhileARetryWaitsIsRenewedAgainNotAStopOfFCM() async throws {
        let simulatorOffsetMs = Atomic<Int64>(0)
        let cacheOffsetMs = Atomic<Int64>(0)
        let simulatorBox = Mutex<PushSimulator?>(nil)
        // Every attempt meets a 429 until the second wait; each wait moves FCM's clock two minutes on (the token the
        // job carries expires there), and the second one also ages the cache's view of the token past half its life
        // (still before its renewal time, so the retry carries it).
        let sleeper = RecordingSleeper { call in
            simulatorOffsetMs.add(120_000, ordering: .relaxed)
            if call == 2 {
                cacheOffsetMs.store(30_000, ordering: .relaxed)
                simulatorBox.withLock { $0 }?.faults = SimulatorFaults()
            }
        }
        let rig = try await Rig(
            faults: SimulatorFaults(tooManyRequestsFraction: 1), lifetime: 60, maxAttempts: 10,
            simulatorClock: { SimulatorClock.systemMilliseconds() + simulatorOffsetMs.load(ordering: .relaxed) },
            now: { Date().addingTimeInterval(Double(cacheOffsetMs.load(ordering: .relaxed)) / 1000) }, sleeper: sleeper)
        simulatorBox.withLock { $0 = rig.harness.simulator }
        let result = await rig.sender.send(Self.item(PushSimulator.mintFCMToken()))
        let stops = rig.sender.summary.stops
        await rig.stop()
        // 429 (T1), 401 (T1 expired at FCM), 429 (T2), 401 (T2 expired again, half spent), 200 (T3).
        #expect(result.kind == .accepted && result.attempts == 5, "\(result)")
        #expect(stops.isEmpty, "\(stops)")
        #expect(sleeper.delays.count == 2)
        #expect(rig.sender.tokens.grantsRequested == 3)
    }

    /// FCM refuses every token it grants (its clock runs a minute past each one's life before it is used): a young
    /// token refused right after a renewal is the credentials' refusal, and stops FCM for the app after one renewal,
    /// not one grant per send.
    @Test func aYoungTokenRefusedAfterARenewalStopsFCMForTheApp() async throws {
        let simulatorMs = Atomic<Int64>(SimulatorClock.systemMilliseconds())
        let rig = try await Rig(lifetime: 60, simulatorClock: { simulatorMs.add(61_000, ordering: .relaxed).newValue })
        let first = await rig.sender.send(Self.item(PushSimulator.mintFCMToken()))
        let second = await rig.sender.send(Self.item(PushSimulator.mintFCMToken()))
        await rig.stop()
        #expect(first.kind == .unsent && first.status == 401 && first.stop?.kind == .credentials, "\(first)")
        #expect(first.attempts == 2)
        #expect(second.kind == .unsent && second.stop?.kind == .credentials)
        #expect(rig.sender.tokens.grantsRequested == 2)
    }

    @Test func accessTokensExpiringMidRunAreRenewedWithNoFailedSend() async throws {
        // A 3 s token lifetime, sending on 4 connections until three rounds have gone out after the renewal. The
        // rounds wait on the renewal, not on a guessed duration: a loaded test process once took so long over its
        // first grant that 7 s of sending ended before the token was due (1 grant; fresh-clone CI, 2026-11-28).
        let rig = try await Rig(lifetime: 3, connections: 4)
        let started = Date()
        var accepted = 0
        var sent = 0
        var roundsAfterRenewal = 0
        while roundsAfterRenewal < 3 {
            guard Date().timeIntervalSince(started) < 60 else {
                Issue.record("no renewal within 60 s: \(rig.sender.tokens.grantsRequested) grants")
                break
            }
            let results = await withTaskGroup(of: DeliveryResult.self) { group in
                for i in 0..<16 { group.addTask { await rig.sender.send(Self.item(PushSimulator.mintFCMToken(), index: i)) } }
                return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
            }
            sent += results.count
            accepted += results.filter(\.isAccepted).count
            if rig.sender.tokens.grantsRequested >= 2 { roundsAfterRenewal += 1 }
            // The sending's pace across the token's lifetime (the loop waits on the renewal above), not a wait for
            // an event.
            try await Task.sleep(for: .milliseconds(200))
        }
        let elapsed = Date().timeIntervalSince(started)
        await rig.stop()
        #expect(accepted == sent && sent > 0)
        // Renewed: at least two grants; at most the first plus one per renewal period (3 s less 1/12) that passed.
        let grants = rig.sender.tokens.grantsRequested
        #expect(grants >= 2 && grants <= 1 + Int(elapsed / 2.75), "\(grants) grants in \(elapsed) s")
        // A renewal started in the last round (sends went on with the still-valid token) may not have reached the
        // simulator before it stopped.
        #expect((grants - 1...grants).contains(rig.harness.simulator.accessTokensGranted), "the simulator's own count")
    }
}
