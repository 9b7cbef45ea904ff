import Crypto
import Synchronization

/// The subscriptions the Web Push service minted, with the private halves it decrypts with, and which have expired.
final class WebPushSubscriptionStore: Sendable {
    /// One subscription and what only the simulator knows of it. Immutable; Crypto's key type just lacks the
    /// Sendable annotation.
    struct Entry: @unchecked Sendable {
        var subscription: MintedSubscription
        var privateKey: P256.KeyAgreement.PrivateKey
        var authSecret: [UInt8]
        /// The applicationServerKey's bytes, when the subscription is restricted to one.
        var applicationServerKey: [UInt8]?
        var expired = false
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Mints a subscription whose endpoint is on `origin` (`https://host:port`), restricted to
    /// `applicationServerKey` (65-octet uncompressed P-256 public key) when given.
    func mint(origin: String, applicationServerKey: [UInt8]?) -> MintedSubscription {
        var random = SystemRandomNumberGenerator()
        let id = StrictBase64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
        let authSecret = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        let privateKey = P256.KeyAgreement.PrivateKey()
        let subscription = MintedSubscription(
            id: id, endpoint: origin + "/wp/" + id, p256dh: StrictBase64URL.encode(privateKey.publicKey.x963Representation),
            auth: StrictBase64URL.encode(authSecret), applicationServerKey: applicationServerKey.map(StrictBase64URL.encode))
        let entry = Entry(
            subscription: subscription, privateKey: privateKey, authSecret: authSecret,
            applicationServerKey: applicationServerKey)
        entries.withLock { $0[id] = entry }
        return subscription
    }

    func entry(_ id: String) -> Entry? { entries.withLock { $0[id] } }

    /// Marks a subscription expired (its pushes answer 410); false when there is no such subscription.
    @discardableResult
    func expire(_ id: String) -> Bool {
        entries.withLock { entries in
            guard entries[id] != nil else { return false }
            entries[id]?.expired = true
            return true
        }
    }

    var all: [MintedSubscription] { entries.withLock { $0.values.map(\.subscription) } }
}
