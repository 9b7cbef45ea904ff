import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addDeviceRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/devices") { request, context in
            try await self.registerDevice(request, app: try context.parameters.require("app"))
        }
        router.delete("/v1/apps/:app/devices/:token") { request, context in
            try await self.unregisterDevice(
                request, app: try context.parameters.require("app"), token: try context.parameters.require("token"))
        }
        // What a web app needs before it registers: the applicationServerKey (PushServer+WebPush.swift).
        router.get("/v1/apps/:app/webpush/key") { request, context in
            try await self.webPushKey(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/unifiedpush/key") { request, context in
            try await self.unifiedPushKey(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/devices/count") { request, context in
            try await self.countDevices(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/devices/lookup") { request, context in
            try await self.lookUpDeviceByAddress(request, app: try context.parameters.require("app"))
        }
        router.get("/v1/apps/:app/devices/:token") { request, context in
            try await self.lookUpDevice(
                request, app: try context.parameters.require("app"), token: try context.parameters.require("token"))
        }
    }

    /// `GET /v1/apps/{app}/devices/{token}` (send keys only) → the registered device: its channels, environment,
    /// first and last registration and APNs' last acceptance; 404 when the token is not registered.
    func lookUpDevice(_ request: Request, app: String, token: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let parsed: DeviceToken
        do { parsed = try DeviceToken(parsing: token.removingPercentEncodingIfNeeded) } catch {
            throw APIError.badRequest("token", "token: \(error.description)")
        }
        return try await deviceAnswer(app: app, key: parsed)
    }

    /// `GET /v1/apps/{app}/devices/lookup?endpoint=URL` or `?fcmToken=TOKEN` (send keys only) → the device, as
    /// `GET …/devices/{token}` answers it, found by what its service addresses it by: a Web Push subscription's or a
    /// UnifiedPush device's endpoint (in any spelling of it: the key hashes its canonical form; the Web Push device
    /// first when one URL is both) or an FCM registration token. What an
    /// operator has at hand (a browser's `PushSubscription.endpoint`, an Android log's token) without computing the
    /// key; the key is in the answer's `token`.
    func lookUpDeviceByAddress(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let query = request.uri.queryParameters
        let (endpoint, fcmToken) = (query.get("endpoint"), query.get("fcmToken"))
        let key: DeviceToken
        switch (endpoint, fcmToken) {
        case (let endpoint?, nil):
            let parsed: WebPushEndpoint
            do { parsed = try WebPushEndpoint(parsing: endpoint, allowingHTTP: true) } catch {
                throw APIError.badRequest("endpoint", error.message)
            }
            key = DeviceKey.unifiedPush(endpointURL: parsed.url)
            if parsed.isSecure {
                let web = DeviceKey.webPush(endpointURL: parsed.url)
                if try await registry.run({ try $0.device(app: app, token: web) }) != nil { return try await deviceAnswer(app: app, key: web) }
            }
        case (nil, let token?):
            do { key = DeviceKey.of(try FCMRegistrationToken(parsing: token, field: "fcmToken")) } catch {
                throw APIError.badRequest("fcmToken", error.message)
            }
        default:
            throw APIError.badRequest("endpoint", "give one of endpoint (a Web Push subscription's) or fcmToken (an FCM registration token)")
        }
        return try await deviceAnswer(app: app, key: key)
    }

    /// The registered device under `key` with its installation fields, or 404 `unknown_device`.
    func deviceAnswer(app: String, key parsed: DeviceToken) async throws -> Response {
        let found = try await registry.run { (store) throws -> (RegisteredDevice, Installation)? in
            guard let device = try store.device(app: app, token: parsed) else { return nil }
            return (device, try store.installation(app: app, token: parsed) ?? Installation())
        }
        guard let (device, installation) = found else {
            throw APIError(.notFound, "unknown_device", "token \(parsed.masked) is not registered for \(app)")
        }
        return JSONResponse.make(.ok, .object([
            ("token", .string(device.token.hex)),
        ] + Self.serviceFields(device.service, device.webPush, registrationToken: device.registrationToken) + [
            ("channels", .array(device.channels.map { .string($0) })),
            ("environment", .string(device.environment.rawValue)),
            ("registeredAt", .string(Timestamp.rfc3339(ms: device.createdMs, milliseconds: true))),
            ("lastRegisteredAt", .string(Timestamp.rfc3339(ms: device.lastRegisteredMs, milliseconds: true))),
            ("lastSuccessAt", device.lastSuccessMs.map { .string(Timestamp.rfc3339(ms: $0, milliseconds: true)) } ?? .null),
        ] + installation.jsonFields))
    }

    /// `POST /v1/apps/{app}/devices`: JSON or the seed client's form body. 201 new, 200 updated/replaced. A Web Push
    /// registration's answer adds `service` and `endpoint`, an FCM one `service` and `fcmToken`; an APNs one is unchanged
    /// (what existing apps parse).
    func registerDevice(_ request: Request, app: String) async throws -> Response {
        let (settings, kind) = try authorizeKey(request, app: app, need: .registration)
        let bytes = try await readBody(request, limit: limits.deviceBodyBytes)
        let body: RegistrationBody
        switch mediaType(request) {
        case "application/json":
            body = try RegistrationBody.parseJSON(
                bytes, webPush: settings.webPush?.hostPolicy, unifiedPush: settings.unifiedPush?.hostPolicy)
        // NSURLSession sends a body without Content-Type as form data; the seed client relies on it.
        case "application/x-www-form-urlencoded", nil: body = try RegistrationBody.parseForm(bytes)
        case let other?:
            throw APIError(.unsupportedMediaType, "unsupported_media_type",
                           "Content-Type \(other) is not supported; use application/json or application/x-www-form-urlencoded")
        }
        try checkUserProof(body.fields, app: app, key: kind)
        // Push Kit's tokens are only ever sent with the app's own client credentials: a registration for an app
        // without `apps.ID.hms` could never be delivered, so it is refused here, naming the field.
        if body.fields.service == .hms, settings.hms == nil {
            throw APIError.badRequest("service", "this app has no Huawei Push Kit configured (apps.\(app).hms)")
        }
        // The same for HarmonyOS NEXT: its tokens are only ever sent with the app's project's service account.
        if body.fields.service == .harmonyos, settings.harmonyos == nil {
            throw APIError.badRequest("service", "this app has no Push Kit for HarmonyOS configured (apps.\(app).harmonyos)")
        }
        try await discoverUnifiedPush(body.fields, app: app, settings: settings)
        let registration = body.fields.request(app: app, defaultEnvironment: settings.defaultEnvironment)
        // A new device without channels or installation fields is exactly what was just stored; anything else
        // (carried-over or normalised channels, an existing environment, installation fields) the batcher reads back
        // on its thread right after the commit.
        let registered: RegistrationBatcher.Registered
        switch await batcher.register(registration) {
        case .success(let r): registered = r
        case .failure(let error) where error.code == .invalidInput:
            throw APIError.badRequest("channels", error.message)
        case .failure(let error) where error.code == .constraint:
            // The key is held by a device of another service: a device never changes service.
            throw APIError(.conflict, "service_conflict", error.message)
        case .failure(let error): throw error
        }
        let (outcome, device, installation) = (registered.outcome, registered.device, registered.installation)
        var fields: [(String, JSONValue)] = [
            ("token", .string(body.token.hex)),
        ] + (body.fields.service == .apns ? [] : Self.serviceFields(
            body.fields.service, body.fields.subscription ?? body.fields.unifiedPush, registrationToken: body.fields.fcmToken?.value ?? body.fields.hmsToken?.value
                ?? body.fields.harmonyosToken?.value)) + [
            ("channels", .array((device?.channels ?? body.channels ?? []).map { .string($0) })),
            ("environment", .string((device?.environment ?? registration.environment ?? .production).rawValue)),
        ]
        if let installation { fields += installation.jsonFields }
        let (status, outcomeFields) = Self.registrationAnswer(outcome)
        fields += outcomeFields
        metrics.registration(app: app, outcome: fields.first { $0.0 == "outcome" }?.1.stringValue ?? "")
        return JSONResponse.make(status, .object(fields))
    }

    /// A device's `service`; for a Web Push device its subscription's `endpoint`, for an FCM device its registration
    /// token as `fcmToken`, for an HMS device its push token as `hmsToken`, for a HarmonyOS device its push token as `harmonyosToken` (its `token` is the key, as a web device's).
    static func serviceFields(
        _ service: PushService, _ subscription: WebPushSubscription?, registrationToken: String?
    ) -> [(String, JSONValue)] {
        let name = switch service { case .hms: "hmsToken"; case .harmonyos: "harmonyosToken"; default: "fcmToken" }
        return [("service", .string(service.rawValue))] + (subscription.map { [("endpoint", .string($0.endpoint.url))] } ?? [])
            + (registrationToken.map { [(name, .string($0))] } ?? [])
    }

    /// A registration's HTTP status (201 new, 200 otherwise) and its `outcome` (and `replaced`) fields.
    static func registrationAnswer(_ outcome: RegistrationOutcome) -> (HTTPResponse.Status, [(String, JSONValue)]) {
        switch outcome {
        case .created: return (.created, [("outcome", .string("created"))])
        case .updated: return (.ok, [("outcome", .string("updated"))])
        case .replaced(let old): return (.ok, [("outcome", .string("replaced")), ("replaced", .string(old.hex))])
        }
    }

    /// `DELETE /v1/apps/{app}/devices/{token}`: 204, or 404 when the token is not registered.
    func unregisterDevice(_ request: Request, app: String, token: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .registration)
        let parsed: DeviceToken
        do { parsed = try DeviceToken(parsing: token.removingPercentEncodingIfNeeded) } catch {
            throw APIError.badRequest("token", "token: \(error.description)")
        }
        guard try await registry.run({ try $0.unregister(app: app, token: parsed) }) else {
            throw APIError(.notFound, "unknown_device", "token \(parsed.masked) is not registered for \(app)")
        }
        return Response(status: .noContent)
    }

    /// `GET /v1/apps/{app}/devices/count[?channel=]` → `{"count": n}` (send keys only).
    func countDevices(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let channel = request.uri.queryParameters.get("channel")
        let environment = try request.uri.queryParameters.get("environment").map { (text) throws(APIError) -> APNsEnvironment in
            guard let e = APNsEnvironment(rawValue: text) else {
                throw APIError.badRequest("environment", "environment must be development or production")
            }
            return e
        }
        do {
            let n = try await registry.run { try $0.count(app: app, channel: channel, environment: environment) }
            return JSONResponse.make(.ok, .object([("count", .int(Int64(n)))]))
        } catch let error where error.code == .invalidInput {
            throw APIError.badRequest("channel", error.message)
        }
    }
}

extension String {
    /// Percent-decoding for a path segment (tokens in `<…>` form arrive encoded).
    var removingPercentEncodingIfNeeded: String {
        guard contains("%") else { return self }
        var out: [UInt8] = []
        var bytes = Array(utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2,
                let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
