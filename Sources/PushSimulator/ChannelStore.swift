import PushCore
import Synchronization

/// A broadcast channel the simulator holds.
public struct SimulatorChannel: Sendable, Equatable {
    /// The channel id (base64 of 16 random bytes).
    public var id: String
    /// Its `message-storage-policy`.
    public var policy: ChannelStoragePolicy

    /// Creates a channel record.
    public init(id: String, policy: ChannelStoragePolicy) {
        self.id = id
        self.policy = policy
    }
}

/// The simulator's broadcast channels, per bundle id (one environment: the simulator's), and the rules that
/// depend on them.
final class ChannelStore: Sendable {
    /// What a channel request came to.
    enum Outcome: Sendable, Equatable {
        case created(String)
        case info(ChannelStoragePolicy)
        case list([String])
        case deleted
        /// An accepted broadcast, with the channel's policy.
        case broadcast(ChannelRequestValidator.Broadcast)
        case reject(APNsReason)
    }

    private struct State {
        /// Channels per bundle id, in creation order.
        var byBundle: [String: [SimulatorChannel]] = [:]
    }

    private let state = Mutex(State())
    /// Channels per bundle id that can exist at once (Apple: 10,000 per app and environment).
    let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Applies a validated operation; `newId` makes a channel id.
    func apply(_ operation: ChannelRequestValidator.Operation, newId: () -> String) -> Outcome {
        state.withLock { s in
            switch operation {
            case .create(let bundle, let policy):
                var channels = s.byBundle[bundle] ?? []
                guard channels.count < limit else { return .reject(.cannotCreateChannelConfig) }
                var id = newId()
                while channels.contains(where: { $0.id == id }) { id = newId() }
                channels.append(SimulatorChannel(id: id, policy: policy))
                s.byBundle[bundle] = channels
                return .created(id)
            case .read(let bundle, let id):
                guard let channel = s.byBundle[bundle]?.first(where: { $0.id == id }) else { return .reject(.channelNotRegistered) }
                return .info(channel.policy)
            case .list(let bundle):
                return .list((s.byBundle[bundle] ?? []).map(\.id))
            case .delete(let bundle, let id):
                guard let index = s.byBundle[bundle]?.firstIndex(where: { $0.id == id }) else {
                    return .reject(.channelNotRegistered)
                }
                s.byBundle[bundle]?.remove(at: index)
                return .deleted
            case .broadcast(let broadcast):
                guard let channel = s.byBundle[broadcast.bundleId]?.first(where: { $0.id == broadcast.channelId }) else {
                    return .reject(.channelNotRegistered)
                }
                // A no-storage channel keeps nothing: only "deliver now" (0 or no header) makes sense.
                if channel.policy == .noStorage, let expiration = broadcast.expiration, expiration != 0 {
                    return .reject(.badExpirationDate)
                }
                return .broadcast(broadcast)
            }
        }
    }

    /// The channels of `bundleId`, oldest first.
    func channels(bundleId: String) -> [SimulatorChannel] {
        state.withLock { $0.byBundle[bundleId] ?? [] }
    }

    /// Adds channels directly (tests and scripted setups), bypassing the limit.
    func insert(_ channels: [SimulatorChannel], bundleId: String) {
        state.withLock { $0.byBundle[bundleId, default: []].append(contentsOf: channels) }
    }
}
