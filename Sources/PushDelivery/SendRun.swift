import Logging
import PushCore

/// `pushctl send`: one notification to a list of tokens or to registered devices, with every outcome
/// committed to the delivery log (prunes and last-success times in the same transactions) before it is
/// reported. Not resumable (no broadcast id); use a broadcast for that.
public struct SendRun: Sendable {
    /// Which devices.
    public enum Targets: Sendable {
        /// Exactly these tokens, as APNs devices (Live Activity tokens).
        case tokens([DeviceToken])
        /// Exactly these devices, each through its own push service (``DeliveryTarget/webPush``): listed tokens looked
        /// up in the registry first (`pushctl send --token`), so a Web Push device's key reaches its subscription.
        case listed([DeliveryTarget])
        /// The devices of an audience, read beforehand (`pushctl send --user/--where`): sent to as listed devices,
        /// logged as ``DeliveryLogScope/isDirect(listedTokens:audience:)`` says (as the API's job for it is).
        case audience([DeliveryTarget], Audience)
        /// The app's registered devices, optionally only a channel (streamed in keyset pages).
        case registered(channel: String?)
    }

    let store: DeliveryStore
    let app: String
    let configuration: BroadcastConfiguration
    let logger: Logger

    /// Creates a run for `app`.
    public init(store: DeliveryStore, app: String, configuration: BroadcastConfiguration = .init(), logger: Logger = Logger(label: "send")) {
        self.store = store
        self.app = app
        self.configuration = configuration
        self.logger = logger
    }

    /// Sends `makeRequest(token)` to every target through `sender`. `onCommitted` gets each batch of results
    /// once committed (with the store's pruned flags); `onUnrecorded` gets results the database could not
    /// take (it stayed unavailable past its outage limit). Returns why the run stopped early, if it did.
    public func run(
        _ targets: Targets, sender: any DeliverySender, stop: StopFlag,
        makeRequest: @escaping @Sendable (DeviceToken) -> NotificationRequest,
        onCommitted: @escaping @Sendable ([DeliveryResult]) -> Void,
        onUnrecorded: @escaping @Sendable ([DeliveryResult]) -> Void
    ) async -> StopReason? {
        let access = StoreAccess(store: store, outageLimitMs: configuration.storeOutageLimitMs, logger: logger)
        let (inFlight, ahead) = DeliveryPump.windows(for: sender)
        let direct: Bool
        switch targets {
        case .tokens, .listed: direct = true
        case .audience(_, let audience): direct = DeliveryLogScope.isDirect(listedTokens: false, audience: audience)
        case .registered: direct = false
        }
        let committer = OutcomeCommitter(
            access: access, app: app, job: nil, tracker: nil, ahead: ahead, batchSize: configuration.commitBatchSize,
            intervalMs: configuration.commitIntervalMs, recordEvents: configuration.webhookApps.contains(app),
            deliveryLog: configuration.deliveryLog(for: app), direct: direct,
            onCommitted: onCommitted,
            onFailure: { stop.raise(.store($0.message)) }, onUnrecorded: onUnrecorded)
        sender.beginRun()
        var pages = TargetPages(targets: targets, app: app, access: access, batchSize: configuration.batchSize)
        var count = 0
        await DeliveryPump(sender: sender, inFlight: inFlight, ahead: ahead, committer: committer, stop: stop).run {
            () throws(DeliveryStoreError) -> DeliveryPump.Step? in
            guard let target = try await pages.next() else { return nil }
            count += 1
            return DeliveryPump.Step(
                item: SendItem(makeRequest(target.token), target: target), seq: count, maybeSentBefore: false)
        }
        sender.endRun()
        return stop.reason
    }
}

/// Explicit tokens, or the registry's devices in keyset pages read off the cooperative pool.
struct TargetPages {
    let targets: SendRun.Targets
    let app: String
    let access: StoreAccess
    let batchSize: Int
    var page: [DeliveryTarget] = []
    var index = 0
    var after = ""
    var finished = false

    init(targets: SendRun.Targets, app: String, access: StoreAccess, batchSize: Int) {
        self.targets = targets
        self.app = app
        self.access = access
        self.batchSize = max(1, batchSize)
        switch targets {
        case .tokens(let tokens):
            page = tokens.map { DeliveryTarget(token: $0, environment: nil) }
            finished = true
        case .listed(let targets), .audience(let targets, _):
            page = targets
            finished = true
        case .registered:
            break
        }
    }

    mutating func next() async throws(DeliveryStoreError) -> DeliveryTarget? {
        while index >= page.count {
            guard !finished, case .registered(let channel) = targets else { return nil }
            let (app, after, limit) = (app, after, batchSize)
            page = try await access.run("reading devices") { store throws(DeliveryStoreError) in
                try store.devices(app: app, channel: channel, environment: nil, after: after, limit: limit)
            }
            index = 0
            if page.count < limit { finished = true }
            if let last = page.last { self.after = last.token.hex }
        }
        defer { index += 1 }
        return page[index]
    }
}
