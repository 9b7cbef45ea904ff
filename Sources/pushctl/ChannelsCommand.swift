import ArgumentParser
import PushCore
import PushSender
import PushStore

/// `pushctl channels …`: iOS 18 broadcast channels through Apple's channel management API, kept in the registry.
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, list, show and delete iOS 18 broadcast channels (Live Activities).",
        discussion: """
            Requests go to Apple's channel management host for the environment (api-manage-broadcast.sandbox.push.apple.com:2195 \
            or api-manage-broadcast.push.apple.com:2196; `apps.ID.channelEndpoint` overrides it, the simulator serves it too). \
            Channels are kept in the registry with their storage policy. Broadcast to one with \
            `pushctl live-activity update --broadcast-channel ID` or `pushctl send --broadcast-channel ID`. Exit 1 when APNs \
            refuses (the reason is printed), 3 credentials refused, 5 APNs unreachable.
            """,
        subcommands: [Create.self, List.self, Show.self, Delete.self])
}

/// Options every `channels` subcommand takes.
struct ChannelOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Option(help: "App id from the configuration.") var app: String
    @Option(help: "development or production (default: from the app's endpoint).") var environment: String?
    @Flag(help: "JSON instead of text (list: one JSON array, [] when there are none).") var json = false

    func open() throws -> (PushConfiguration, AppSettings, APNsEnvironment, any RegistryStore) {
        let config = try global.loadConfiguration()
        let settings: AppSettings
        do { settings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        let env = try parseEnvironment(environment) ?? settings.apnsForCommand(app: app).defaultEnvironment
        let registry = try RegistryStores.openForCommand(config)
        return (config, settings, env, registry)
    }
}

extension ChannelsCommand {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a broadcast channel; prints its id.")
        @OptionGroup var options: ChannelOptions
        @Option(name: .customLong("storage-policy"), help: "no-storage (default) or most-recent: whether APNs keeps the latest message for offline devices.")
        var storagePolicy: String = "no-storage"
        @Option(help: "A name for people, kept in the registry.") var label: String?

        func run() async throws {
            guard let policy = ChannelStoragePolicy(parsing: storagePolicy) else {
                throw CLIError.usage("--storage-policy must be no-storage or most-recent, not '\(storagePolicy)'")
            }
            let (config, settings, environment, registry) = try options.open()
            let client = try await ChannelClientFactory.make(config: config, settings: settings)
            let id: String
            do { id = try await client.create(policy: policy, environment: environment) } catch { throw ChannelClientFactory.cliError(error) }
            let record = BroadcastChannelRecord(app: options.app, environment: environment, channelId: id, storagePolicy: policy, label: label)
            try cli { () throws(StoreError) in try registry.saveBroadcastChannel(record) }
            if options.json {
                print(ChannelsCommand.json(record).encodedString)
            } else {
                print(id)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the app's channels as APNs has them, with the registry's policy and label; channels the registry keeps but APNs no longer has are marked gone.")
        @OptionGroup var options: ChannelOptions
        @Flag(help: "Only the registry's channels; do not ask APNs.") var local = false

        func run() async throws {
            let (config, settings, environment, registry) = try options.open()
            let kept = try cli { () throws(StoreError) in try registry.broadcastChannels(app: options.app) }.filter { $0.environment == environment }
            var remote: [String]? = nil
            if !local {
                let client = try await ChannelClientFactory.make(config: config, settings: settings)
                do { remote = try await client.list(environment: environment) } catch { throw ChannelClientFactory.cliError(error) }
            }
            let byId = Dictionary(kept.map { ($0.channelId, $0) }, uniquingKeysWith: { a, _ in a })
            var ids = remote ?? kept.map(\.channelId)
            for k in kept where !ids.contains(k.channelId) { ids.append(k.channelId) }
            // --json: one JSON array, `[]` when there are none (nothing at all would not be JSON).
            var objects: [JSONValue] = []
            defer { if options.json { print(JSONValue.array(objects).encodedString) } }
            for id in ids {
                let record = byId[id]
                let atApple = remote.map { $0.contains(id) }
                if options.json {
                    var fields: [(String, JSONValue)] = [("channelId", .string(id)), ("environment", .string(environment.rawValue))]
                    if let record {
                        fields.append(("storagePolicy", .string(record.storagePolicy.name)))
                        if let label = record.label { fields.append(("label", .string(label))) }
                        fields.append(("createdAt", .string(Timestamp.rfc3339(ms: record.createdMs))))
                    }
                    if let atApple { fields.append(("atApns", .bool(atApple))) }
                    objects.append(.object(fields))
                } else {
                    var line = "\(id) \(record?.storagePolicy.name ?? "(not in the registry)")"
                    if let label = record?.label { line += " \(label)" }
                    if atApple == false { line += " (gone at APNs)" }
                    print(line)
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Read one channel's settings from APNs.")
        @OptionGroup var options: ChannelOptions
        @Argument(help: "The channel id.") var channelId: String

        func run() async throws {
            let (config, settings, environment, registry) = try options.open()
            let client = try await ChannelClientFactory.make(config: config, settings: settings)
            let info: ChannelInfo
            do { info = try await client.info(channelId: channelId, environment: environment) } catch { throw ChannelClientFactory.cliError(error) }
            let label = try cli { () throws(StoreError) in try registry.broadcastChannels(app: options.app) }
                .first { $0.channelId == channelId && $0.environment == environment }?.label
            if options.json {
                var fields: [(String, JSONValue)] = [
                    ("channelId", .string(channelId)), ("environment", .string(environment.rawValue)),
                    ("storagePolicy", .string(info.policy.name)), ("pushType", .string(info.pushType)),
                ]
                if let label { fields.append(("label", .string(label))) }
                print(JSONValue.object(fields).encodedString)
            } else {
                print("\(channelId) \(environment.rawValue) \(info.policy.name) \(info.pushType)" + (label.map { " \($0)" } ?? ""))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a channel at APNs and from the registry.")
        @OptionGroup var options: ChannelOptions
        @Argument(help: "The channel id.") var channelId: String

        func run() async throws {
            let (config, settings, environment, registry) = try options.open()
            let client = try await ChannelClientFactory.make(config: config, settings: settings)
            do { try await client.delete(channelId: channelId, environment: environment) } catch {
                // Already gone at APNs: forget it here too, and say so.
                if case .rejected = error.code, error.reason == .channelNotRegistered {
                    _ = try cli { () throws(StoreError) in try registry.deleteBroadcastChannel(app: options.app, environment: environment, channelId: channelId) }
                }
                throw ChannelClientFactory.cliError(error)
            }
            _ = try cli { () throws(StoreError) in try registry.deleteBroadcastChannel(app: options.app, environment: environment, channelId: channelId) }
            print("deleted \(channelId)")
        }
    }

    static func json(_ record: BroadcastChannelRecord) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("channelId", .string(record.channelId)), ("environment", .string(record.environment.rawValue)),
            ("storagePolicy", .string(record.storagePolicy.name)),
        ]
        if let label = record.label { fields.append(("label", .string(label))) }
        return .object(fields)
    }
}
