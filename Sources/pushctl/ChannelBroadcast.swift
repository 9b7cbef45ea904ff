import PushCore
import PushSender

/// One Live Activity event to every subscriber of an iOS 18 broadcast channel (`POST /4/broadcasts/apps/{bundle}`).
enum ChannelBroadcast {
    static func send(
        config: PushConfiguration, app: String, settings: AppSettings, channelId: String, prepared: PreparedNotification,
        environment: APNsEnvironment?, json: Bool
    ) async throws {
        let client = try await ChannelClientFactory.make(config: config, settings: settings)
        let result: ChannelBroadcastResult
        do { result = try await client.broadcast(channelId: channelId, notification: prepared, environment: environment) } catch {
            throw ChannelClientFactory.cliError(error)
        }
        if json {
            print(result.json(channelId: channelId).encodedString)
        } else {
            print("broadcast to channel \(channelId): accepted (apns-request-id \(result.requestId), apns-unique-id \(result.uniqueId ?? "-"))")
        }
    }
}
