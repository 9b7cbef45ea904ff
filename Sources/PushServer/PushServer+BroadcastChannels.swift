import Hummingbird
import PushCore
import PushLanes
import PushSender
import PushStore

extension PushServer {
    func addBroadcastChannelRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/broadcast-channels") { request, context in
            try await self.createChannel(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/broadcast-channels") { request, context in
            try await self.listChannels(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/broadcast-channels/:channel") { request, context in
            try await self.showChannel(request, app: try context.parameters.require("app"), channel: try context.parameters.require("channel"))
        }
        router.delete("/v1/apps/:app/broadcast-channels/:channel") { request, context in
            try await self.deleteChannel(request, app: try context.parameters.require("app"), channel: try context.parameters.require("channel"))
        }
        router.post("/v1/apps/:app/broadcast-channels/:channel/notifications") { request, context in
            try await self.broadcastToChannel(request, app: try context.parameters.require("app"), channel: try context.parameters.require("channel"))
        }
    }

    /// `POST …/broadcast-channels` (send keys) `{"storagePolicy","environment","label"}` → 201 with the new channel,
    /// created through Apple's channel management API and kept in the registry.
    func createChannel(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "channels are created with application/json")
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: try await readBody(request, limit: limits.deviceBodyBytes)) } catch let error as APIError {
            throw error
        } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        if let unknown = pairs.first(where: { !["storagePolicy", "environment", "label"].contains($0.0) }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)'")
        }
        var policy = ChannelStoragePolicy.noStorage
        if let value = json["storagePolicy"] {
            guard let text = value.stringValue, ["no-storage", "most-recent"].contains(text), let p = ChannelStoragePolicy(parsing: text) else {
                throw APIError.badRequest("storagePolicy", "'storagePolicy' must be no-storage or most-recent")
            }
            policy = p
        }
        var label: String?
        if let value = json["label"] {
            // Unicode code points, as the description's maxLength counts (JSON Schema), not Swift's Characters: a
            // letter with combining marks is one Character and several code points.
            guard let text = value.stringValue, (1...200).contains(text.unicodeScalars.count) else {
                throw APIError.badRequest("label", "'label' must be a string of 1-200 Unicode code points")
            }
            label = text
        }
        let environment = try JobFields.environment(json) ?? Self.apns(settings, app: app).defaultEnvironment
        let client = try await channelClient(app: app, settings: settings)
        let id: String
        do { id = try await client.create(policy: policy, environment: environment) } catch { throw Self.apiError(error) }
        let record = BroadcastChannelRecord(app: app, environment: environment, channelId: id, storagePolicy: policy, label: label)
        let registry = self.registry
        try await registry.run { try $0.saveBroadcastChannel(record) }
        let stored = try await registry.run { try $0.broadcastChannels(app: app) }
            .first { $0.channelId == id && $0.environment == environment } ?? record
        return JSONResponse.make(.created, Self.json(stored))
    }

    /// `GET …/broadcast-channels` (send keys) → `{"channels": [...]}`: the channels the registry keeps.
    func listChannels(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let registry = self.registry
        let channels = try await registry.run { try $0.broadcastChannels(app: app) }
        return JSONResponse.make(.ok, .object([("channels", .array(channels.map(Self.json)))]))
    }

    /// `GET …/broadcast-channels/{channel}[?environment=]` (send keys) → the channel as APNs reports it.
    func showChannel(_ request: Request, app: String, channel: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        let (id, environment) = try channelAddress(request, app: app, channel: channel, settings: settings)
        let client = try await channelClient(app: app, settings: settings)
        let info: ChannelInfo
        do { info = try await client.info(channelId: id, environment: environment) } catch { throw Self.apiError(error) }
        let registry = self.registry
        let kept = try await registry.run { try $0.broadcastChannels(app: app) }.first { $0.channelId == id && $0.environment == environment }
        var fields: [(String, JSONValue)] = [
            ("channelId", .string(id)), ("environment", .string(environment.rawValue)),
            ("storagePolicy", .string(info.policy.name)), ("pushType", .string(info.pushType)),
        ]
        if let label = kept?.label { fields.append(("label", .string(label))) }
        return JSONResponse.make(.ok, .object(fields))
    }

    /// `DELETE …/broadcast-channels/{channel}[?environment=]` (send keys) → 204: deleted at APNs and in the registry.
    func deleteChannel(_ request: Request, app: String, channel: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        let (id, environment) = try channelAddress(request, app: app, channel: channel, settings: settings)
        let client = try await channelClient(app: app, settings: settings)
        let registry = self.registry
        do { try await client.delete(channelId: id, environment: environment) } catch {
            if case .rejected = error.code, error.reason == .channelNotRegistered {
                _ = try await registry.run { try $0.deleteBroadcastChannel(app: app, environment: environment, channelId: id) }
            }
            throw Self.apiError(error)
        }
        _ = try await registry.run { try $0.deleteBroadcastChannel(app: app, environment: environment, channelId: id) }
        return Response(status: .noContent)
    }

    /// `POST …/broadcast-channels/{channel}/notifications` (send keys) → 200 `{"channelId","status","requestId","uniqueId"}`:
    /// one update or end event to every subscriber of the channel (`POST /4/broadcasts/apps/{bundle-id}`), sent now.
    func broadcastToChannel(_ request: Request, app: String, channel: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        let id = channel.removingPercentEncodingIfNeeded
        if let problem = Self.channelIdProblem(id) { throw APIError.badRequest("channel", problem) }
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "broadcasts take application/json")
        }
        let body = try LiveActivityBody.parse(
            try await readBody(request, limit: limits.notificationBodyBytes), kind: .channel, payloadLimit: Self.apns(settings, app: app).payloadLimit,
            nowSeconds: Int64(now().timeIntervalSince1970))
        let client = try await channelClient(app: app, settings: settings)
        let result: ChannelBroadcastResult
        do { result = try await client.broadcast(channelId: id, notification: body.prepared, environment: body.environment) } catch {
            throw Self.apiError(error)
        }
        return JSONResponse.make(.ok, result.json(channelId: id))
    }

    /// The channel id from the path and the environment from `?environment=` (default: the app's).
    private func channelAddress(_ request: Request, app: String, channel: String, settings: AppSettings) throws(APIError) -> (String, APNsEnvironment) {
        let id = channel.removingPercentEncodingIfNeeded
        if let problem = Self.channelIdProblem(id) { throw APIError.badRequest("channel", problem) }
        var environment = try Self.apns(settings, app: app).defaultEnvironment
        if let text = request.uri.queryParameters.get("environment") {
            guard let e = APNsEnvironment(rawValue: text) else { throw APIError.badRequest("environment", "environment must be development or production") }
            environment = e
        }
        return (id, environment)
    }

    /// The app's APNs settings, or 404 `apns_not_configured` for an app without APNs (channels and Live Activities
    /// are APNs features).
    static func apns(_ settings: AppSettings, app: String) throws(APIError) -> APNsSettings {
        do { return try settings.requireAPNs(app: app) } catch { throw APIError(.notFound, "apns_not_configured", error.message) }
    }

    /// Apple's channel ids are base64 text: 1–256 characters of `A-Z a-z 0-9 + / =`.
    static func channelIdProblem(_ id: String) -> String? {
        let ok = !id.isEmpty && id.utf8.count <= 256 && id.utf8.allSatisfy { b in
            (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b) || b == UInt8(ascii: "+")
                || b == UInt8(ascii: "/") || b == UInt8(ascii: "=")
        }
        return ok ? nil : "a channel id is base64 text (1-256 characters of A-Z a-z 0-9 + / =)"
    }

    /// The app's channel-management client, made once and kept (its credentials read on ``BlockingLane/shared``).
    private func channelClient(app: String, settings: AppSettings) async throws(APIError) -> ChannelClient {
        _ = try Self.apns(settings, app: app)
        if let client = channelClients.withLock({ $0[app] }) { return client }
        let client: ChannelClient
        let configuration = configuration, logger = logger
        do { client = try await BlockingLane.shared.run { try ChannelClient.forApp(settings, in: configuration, logger: logger) } } catch {
            throw APIError(.serviceUnavailable, "credentials_unavailable", "the app's credentials cannot be loaded: \(error)")
        }
        return channelClients.withLock { clients in
            if let existing = clients[app] { return existing }
            clients[app] = client
            return client
        }
    }

    /// APNs' answer as an API error: an unknown channel is a 404, other refusals a 422 naming Apple's reason, refused
    /// credentials a 502, APNs unreachable a 503.
    static func apiError(_ error: ChannelError) -> APIError {
        switch error.code {
        case .rejected:
            if error.reason == .channelNotRegistered || error.reason == .badChannelId {
                return APIError(.notFound, "unknown_channel", error.message)
            }
            return APIError(.unprocessableContent, "apns_rejected", error.message)
        case .credentials: return APIError(.badGateway, "apns_credentials_refused", error.message)
        case .unreachable: return APIError(.serviceUnavailable, "apns_unreachable", error.message)
        default: return APIError(.badGateway, "apns_error", error.message)
        }
    }

    static func json(_ record: BroadcastChannelRecord) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("channelId", .string(record.channelId)), ("environment", .string(record.environment.rawValue)),
            ("storagePolicy", .string(record.storagePolicy.name)),
            ("createdAt", .string(Timestamp.rfc3339(ms: record.createdMs, milliseconds: true))),
        ]
        if let label = record.label { fields.append(("label", .string(label))) }
        return .object(fields)
    }
}
