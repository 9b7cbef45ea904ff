import NIOCore
import PushCore
import Synchronization

/// State shared by every connection of one simulator: configuration, faults, device state and records.
final class SimulatorCore: Sendable {
    let configuration: SimulatorConfiguration
    let validator: RequestValidator
    let verifier: ProviderTokenVerifier
    let recorder: SimulatorRecorder
    let channelValidator: ChannelRequestValidator
    let channels: ChannelStore
    /// The Web Push service on the same listener.
    let webPush: WebPushService
    /// The UnifiedPush distributor on the same listener (its endpoints in the Web Push service's store).
    let unifiedPush: UnifiedPushDistributor
    /// The OAuth token endpoint FCM senders get access tokens from, on the same listener.
    let oauth: OAuthTokenService
    /// The FCM HTTP v1 endpoint, on the same listener.
    let fcm: FCMMessageService
    /// Huawei's OAuth token endpoint Push Kit senders get access tokens from, on the same listener.
    let hmsOAuth: HMSTokenService
    /// The Huawei Push Kit send endpoint, on the same listener.
    let hms: HMSMessageService
    let harmonyos: HarmonyOSMessageService
    /// Tokens whose Live Activity an accepted `end` event closed, with when (ms since 1970).
    private let endedActivities = Mutex<[DeviceToken: Int64]>([:])
    /// Lets liveactivity pushes skip the lock while no activity has ended.
    private let hasEndedActivities = Atomic<Bool>(false)
    private let faultState: Mutex<SimulatorFaults>
    private let deviceState: Mutex<[DeviceToken: DeviceBehaviour]>
    /// Lets the hot path skip the device lock entirely while no device is scripted.
    private let hasDevices: Atomic<Bool>
    /// When the last answer of ``SimulatorFaults/answersPerSecond`` is due (uptime ns); every connection takes its
    /// slot from here, so the rate holds across connections.
    private let lastAnswerSlot = Mutex<UInt64>(0)
    /// New connections seen by the handshake-reset fault.
    private let handshakesSeen = Atomic<Int>(0)

    init(configuration: SimulatorConfiguration) throws(SimulatorError) {
        self.configuration = configuration
        self.validator = RequestValidator(environment: configuration.environment)
        self.verifier = try ProviderTokenVerifier(
            keys: configuration.jwtKeys, lifetimeSeconds: configuration.providerTokenLifetime)
        self.recorder = try SimulatorRecorder(
            limit: configuration.receivedLimit, recordFile: configuration.recordFile, inboxLimit: configuration.inboxLimit)
        self.channelValidator = ChannelRequestValidator(
            requests: validator, broadcastDisabled: configuration.broadcastDisabledBundleIds)
        self.channels = ChannelStore(limit: configuration.maxChannelsPerBundleId)
        self.webPush = WebPushService(recorder: recorder, clock: configuration.clock, host: configuration.host)
        self.unifiedPush = UnifiedPushDistributor(webPush: webPush, recorder: recorder, clock: configuration.clock)
        self.oauth = try OAuthTokenService(
            accounts: configuration.fcmServiceAccounts, lifetimeSeconds: configuration.accessTokenLifetime,
            recorder: recorder, clock: configuration.clock)
        self.fcm = FCMMessageService(
            oauth: oauth, recorder: recorder, clock: configuration.clock, receivedLimit: configuration.receivedLimit,
            unregistered: configuration.fcmUnregisteredTokens, foreign: configuration.fcmForeignTokens)
        self.hmsOAuth = HMSTokenService(
            apps: configuration.hmsApps, lifetimeSeconds: configuration.hmsAccessTokenLifetime, recorder: recorder,
            clock: configuration.clock)
        self.hms = HMSMessageService(
            oauth: hmsOAuth, recorder: recorder, clock: configuration.clock, receivedLimit: configuration.receivedLimit,
            invalid: configuration.hmsInvalidTokens)
        self.harmonyos = HarmonyOSMessageService(
            recorder: recorder, clock: configuration.clock, receivedLimit: configuration.receivedLimit,
            invalid: configuration.harmonyosInvalidTokens)
        for account in configuration.harmonyosAccounts { harmonyos.trust(account) }
        self.faultState = Mutex(configuration.faults)
        self.deviceState = Mutex(configuration.devices)
        self.hasDevices = Atomic(!configuration.devices.isEmpty)
    }

    var faults: SimulatorFaults {
        get { faultState.withLock { $0 } }
        set { faultState.withLock { $0 = newValue } }
    }

    func device(_ token: DeviceToken) -> DeviceBehaviour? {
        guard hasDevices.load(ordering: .relaxed) else { return nil }
        return deviceState.withLock { $0[token] }
    }

    func updateDevices(_ body: (inout [DeviceToken: DeviceBehaviour]) -> Void) {
        deviceState.withLock { devices in
            body(&devices)
            hasDevices.store(!devices.isEmpty, ordering: .relaxed)
        }
    }

    var devices: [DeviceToken: DeviceBehaviour] { deviceState.withLock { $0 } }

    /// When `token`'s Live Activity ended, or nil while it is live.
    func activityEnded(_ token: DeviceToken) -> Int64? {
        guard hasEndedActivities.load(ordering: .relaxed) else { return nil }
        return endedActivities.withLock { $0[token] }
    }

    /// Records an accepted `end` event for `token` (the first one counts).
    func endActivity(_ token: DeviceToken, atMs: Int64) {
        endedActivities.withLock { ended in
            if ended[token] == nil { ended[token] = atMs }
            hasEndedActivities.store(true, ordering: .relaxed)
        }
    }

    func now() -> Int64 { configuration.clock() }

    /// The deadline of the next answer at `perSecond` answers per second: 1/`perSecond` after the previous one, or now
    /// when the line is empty.
    func nextAnswerSlot(perSecond: Double) -> NIODeadline {
        let interval = UInt64(1_000_000_000 / max(perSecond, 0.001))
        let now = NIODeadline.now().uptimeNanoseconds
        let slot = lastAnswerSlot.withLock { last in
            last = max(now, last + interval)
            return last
        }
        return .uptimeNanoseconds(slot)
    }

    /// True when this new connection's TLS handshake must be reset (``SimulatorFaults/resetHandshakes``).
    func shouldResetHandshake() -> Bool {
        let budget = faults.resetHandshakes
        guard budget > 0 else { return false }
        return handshakesSeen.wrappingAdd(1, ordering: .relaxed).oldValue < budget
    }
}

/// A fast non-cryptographic generator (xoshiro256**) for apns-ids and fault dice; the system generator
/// costs a syscall per draw, which would dominate the per-request cost.
struct FastRandom: RandomNumberGenerator {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var system = SystemRandomNumberGenerator()
        s = (system.next(), system.next(), system.next(), system.next() | 1)
    }

    mutating func next() -> UInt64 {
        let result = rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotl(s.3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool {
        p > 0 && (p >= 1 || Double(next() >> 11) * 0x1.0p-53 < p)
    }

    /// A random version-4 UUID in lowercase.
    mutating func uuid() -> String {
        let a = next(), b = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = Self.hexDigits
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
