import Crypto
import Synchronization

/// The subscriptions the Web Push service minted and the endpoints the UnifiedPush distributor registered (the same
/// thing to a sender: an RFC 8030 push resource with RFC 8291 keys), with the private halves they decrypt with, and
/// which have expired.
final class WebPushSubscriptionStore: Sendable {
    /// Which service minted an entry: each answers pushes to its own only.
    enum Kind: Sendable, Equatable {
        /// A browser's subscription (``WebPushService``, `/wp/<id>`).
        case webPush
        /// A UnifiedPush endpoint (``UnifiedPushDistributor``, `/up/<id>`).
        case unifiedPush

        /// The endpoint's path before the id.
        var pathPrefix: String { self == .webPush ? "/wp/" : "/up/" }
        /// Random bytes in the id: 16 for Web Push; 20 for UnifiedPush, as SERV_1.2.0 recommends (160 bits).
        var idBytes: Int { self == .webPush ? 16 : 20 }
    }

    /// One subscription and what only the simulator knows of it. Immutable; Crypto's key type just lacks the
    /// Sendable annotation.
    struct Entry: @unchecked Sendable {
        var subscription: MintedSubscription
        var privateKey: P256.KeyAgreement.PrivateKey
        var authSecret: [UInt8]
        /// The applicationServerKey's bytes, when the subscription is restricted to one.
        var applicationServerKey: [UInt8]?
        var kind: Kind
        var expired = false
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Mints a subscription whose endpoint is on `origin` (`https://host:port`), restricted to
    /// `applicationServerKey` (65-octet uncompressed P-256 public key) when given.
    func mint(origin: String, applicationServerKey: [UInt8]?, kind: Kind = .webPush) -> MintedSubscription {
        var random = SystemRandomNumberGenerator()
        let id = StrictBase64URL.encode((0..<kind.idBytes).map { _ in UInt8.random(in: 0...255, using: &random) })
        let authSecret = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        let privateKey = P256.KeyAgreement.PrivateKey()
        let subscription = MintedSubscription(
            id: id, endpoint: origin + kind.pathPrefix + id, p256dh: StrictBase64URL.encode(privateKey.publicKey.x963Representation),
            auth: StrictBase64URL.encode(authSecret), applicationServerKey: applicationServerKey.map(StrictBase64URL.encode))
        let entry = Entry(
            subscription: subscription, privateKey: privateKey, authSecret: authSecret,
            applicationServerKey: applicationServerKey, kind: kind)
        entries.withLock { $0[id] = entry }
        return subscription
    }

    /// The entry `kind`'s service minted as `id`, or nil (another service's ids are unknown to it).
    func entry(_ id: String, kind: Kind = .webPush) -> Entry? {
        entries.withLock { $0[id] }.flatMap { $0.kind == kind ? $0 : nil }
    }

    /// Marks a subscription expired (its pushes answer 410; a UnifiedPush endpoint's 404); false when `kind`'s service
    /// minted no such subscription.
    @discardableResult
    func expire(_ id: String, kind: Kind = .webPush) -> Bool {
        entries.withLock { entries in
            guard entries[id]?.kind == kind else { return false }
            entries[id]?.expired = true
            return true
        }
    }

    /// Every subscription `kind`'s service minted.
    func all(_ kind: Kind = .webPush) -> [MintedSubscription] {
        entries.withLock { $0.values.filter { $0.kind == kind }.map(\.subscription) }
    }
}
