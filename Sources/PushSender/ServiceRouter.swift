import PushCore
import Synchronization

/// One app's senders behind the one seam: routes each notification to its device's push service (the item's
/// `service`) — the APNs ``APNsSender``, the ``WebPushSender`` or the ``FCMSender`` — and combines what the engine
/// reads (summary, endpoint conditions, breakers) and the run boundaries. An app has any set of the services.
/// A notification for a service the app does not have finishes at once as `.rejected`, status 0, reason `NoService`;
/// one for a service whose credentials could not be loaded finishes as `.deferred` (a later run retries it), status 0,
/// reason ``unavailableReason``, the load failure in its `error`.
public final class ServiceRouter: DeliverySender, Sendable {
    /// The APNs sender, if the app has APNs.
    public let apns: APNsSender?
    /// The Web Push sender, if the app has Web Push.
    public let webPush: WebPushSender?
    /// The FCM sender, if the app has FCM.
    public let fcm: FCMSender?
    /// The Huawei Push Kit sender, if the app has HMS.
    public let hms: HMSSender?
    /// The Push Kit sender for HarmonyOS NEXT, if the app has it.
    public let harmonyos: HarmonyOSSender?
    /// The UnifiedPush sender (a ``WebPushSender`` for distributors), if the app has UnifiedPush.
    public let unifiedPush: WebPushSender?
    /// The services the app has whose senders could not be made, with one line naming why.
    public let unavailable: [PushService: String]
    /// Counts of items finished here (no service for them, or their service's credentials unavailable), and of the
    /// unsent results of a credential stop handed on as deferred.
    private let refused = Mutex(Refusals())

    private struct Refusals {
        var summary = SendSummary()
        var convertedFromUnsent = 0
    }

    /// The reason of a device whose service's credentials could not be loaded.
    public static let unavailableReason = "CredentialsUnavailable"
    /// The reason of a device whose service refused our credentials during the run, in an app with other services.
    public static let refusedReason = "CredentialsRefused"

    /// True when the app has more than one service: a credential stop of one then defers its devices rather than
    /// stopping the run (``submit(_:onResult:onPruneReleased:)``). With one service nothing else could deliver, and the
    /// stop interrupts the run as it always did (exit 3).
    private let isolatesCredentialStops: Bool

    /// Routes to `apns`, `webPush`, `fcm` and `hms`; `unavailable` names the app's services that have no sender and
    /// why.
    public init(
        apns: APNsSender?, webPush: WebPushSender?, fcm: FCMSender? = nil, hms: HMSSender? = nil, harmonyos: HarmonyOSSender? = nil,
        unifiedPush: WebPushSender? = nil, unavailable: [PushService: String] = [:]
    ) {
        self.apns = apns
        self.webPush = webPush
        self.fcm = fcm
        self.hms = hms
        self.harmonyos = harmonyos
        self.unifiedPush = unifiedPush
        self.unavailable = unavailable
        isolatesCredentialStops = [apns != nil, webPush != nil, fcm != nil, hms != nil, harmonyos != nil, unifiedPush != nil].filter { $0 }.count
            + unavailable.count > 1
    }

    private var senders: [any DeliverySender] { [apns as (any DeliverySender)?, webPush, fcm, hms, harmonyos, unifiedPush].compactMap { $0 } }

    /// The APNs sender's settings when the app has APNs, else Web Push's, else FCM's (the engine sizes its window from
    /// it).
    public var configuration: SenderConfiguration {
        apns?.configuration ?? webPush?.configuration ?? fcm?.configuration ?? hms?.configuration ?? harmonyos?.configuration ?? unifiedPush?.configuration
            ?? .init()
    }

    /// The window of that configuration.
    public var inFlightLimit: Int { configuration.inFlightLimit }

    /// APNs' figures when the app has APNs, else Web Push's, else FCM's.
    public var metrics: SenderMetrics {
        apns?.metrics ?? webPush?.metrics ?? fcm?.metrics ?? hms?.metrics ?? harmonyos?.metrics ?? unifiedPush?.metrics ?? SenderMetrics()
    }

    public var summary: SendSummary {
        let (own, converted) = refused.withLock { ($0.summary, $0.convertedFromUnsent) }
        var total = own
        for sender in senders { total.add(sender.summary) }
        // The senders counted these as unsent; the engine got them deferred.
        total.unsent -= converted
        total.deferred += converted
        return total
    }

    /// Each sender's breakers; for one key the later sender's wins: the APNs sender passes on every state it was
    /// given (FCM's too, as loaded), while the FCM sender reports its own, current one.
    public var breakerStates: [String: PruningBreaker.State] {
        senders.reduce(into: [:]) { states, sender in states.merge(sender.breakerStates) { _, later in later } }
    }

    public var trippedEndpoints: [String] { senders.flatMap(\.trippedEndpoints).sorted() }

    public var endpointConditions: [EndpointCondition] {
        senders.flatMap(\.endpointConditions).sorted { $0.endpoint < $1.endpoint }
    }

    public func submit(
        _ item: SendItem, onResult: @escaping @Sendable (DeliveryResult) -> Void,
        onPruneReleased: (@Sendable (DeviceToken) -> Void)?
    ) {
        let sender: (any DeliverySender)? = switch item.service {
        case .apns: apns
        case .webpush: webPush
        case .fcm: fcm
        case .hms: hms
        case .harmonyos: harmonyos
        case .unifiedpush: unifiedPush
        }
        if let sender {
            guard isolatesCredentialStops else {
                sender.submit(item, onResult: onResult, onPruneReleased: onPruneReleased)
                return
            }
            // An app with several services: one service refusing our credentials (APNs' InvalidProviderToken, a Web
            // Push service's 401/403, FCM's THIRD_PARTY_AUTH_ERROR) stops that service only. Its devices come back
            // deferred under `CredentialsRefused`, the stop's message as their error, instead of stopping the run:
            // the other services go on, the run completes (exit 1), and the same command sends them once the
            // credentials are fixed.
            sender.submit(item, onResult: { [self] result in
                guard result.kind == .unsent, let stop = result.stop, stop.kind == .credentials else {
                    onResult(result)
                    return
                }
                var converted = result
                converted.kind = .deferred
                converted.reason = .unknown(Self.refusedReason)
                converted.error = stop.message
                converted.stop = nil
                refused.withLock { $0.convertedFromUnsent += 1 }
                onResult(converted)
            }, onPruneReleased: onPruneReleased)
            return
        }
        let service = item.service.rawValue
        let now = SystemClock().nowMs()
        if let problem = unavailable[item.service] {
            refused.withLock { $0.summary.count(.deferred, possiblyDuplicated: false) }
            onResult(DeliveryResult(
                token: item.request.token, notificationId: item.request.notificationId, status: 0, reason: .unknown(Self.unavailableReason),
                kind: .deferred, attempts: 0, startedAtMs: now, finishedAtMs: now, error: problem, service: item.service))
            return
        }
        let reason = "the app has no \(service) configuration: a \(service) device cannot be sent to"
        refused.withLock { $0.summary.count(.rejected, possiblyDuplicated: false) }
        onResult(DeliveryResult(
            token: item.request.token, notificationId: item.request.notificationId, status: 0, reason: .unknown("NoService"),
            kind: .rejected, attempts: 0, startedAtMs: now, finishedAtMs: now, error: reason, service: item.service))
    }

    public func beginRun() { for sender in senders { sender.beginRun() } }

    public func abandonWaiting(_ reason: String) { for sender in senders { sender.abandonWaiting(reason) } }

    @discardableResult public func endRun() -> Int { senders.reduce(0) { $0 + $1.endRun() } }

    public func shutdown() async { for sender in senders { await sender.shutdown() } }
}
