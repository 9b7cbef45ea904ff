import Hummingbird
import PushCore
import PushSender
import PushStore

extension PushServer {
    func addUserRoutes(to router: Router<BasicRequestContext>) {
        router.get("/v1/apps/:app/users/:user/devices") { request, context in
            try await self.userDevices(request, app: try context.parameters.require("app"), user: try context.parameters.require("user"))
        }
        router.delete("/v1/apps/:app/users/:user") { request, context in
            try await self.detachUser(request, app: try context.parameters.require("app"), user: try context.parameters.require("user"))
        }
        router.post("/v1/apps/:app/audience-count") { request, context in
            try await self.countAudience(request, app: try context.parameters.require("app"))
        }
    }

    /// A registration may name a user only with proof (see ``UserAuth``): made with a send key, or carrying
    /// `userAuth` = HMAC-SHA256(user) under the app's `userSecret`. Otherwise 403 naming `user`, before anything is
    /// stored. `"user": null` (a device logging itself out) needs no proof.
    func checkUserProof(_ fields: RegistrationFields, app: String, key: APIKeyKind) throws(APIError) {
        guard let user = fields.installation.user.value, key != .send else { return }
        guard let proof = fields.userAuth else {
            throw APIError(.forbidden, "forbidden_user",
                           "user: a registration key may attach a user only with userAuth (HMAC-SHA256 of the user id under the app's userSecret)")
        }
        guard let secret = userSecrets[app] else {
            throw APIError(.forbidden, "forbidden_user", "user: \(app) has no userSecret configured, so userAuth cannot be checked; register users with a send key")
        }
        guard UserAuth.verify(userAuth: proof, user: user, secret: secret, mac: hmacSHA256) else {
            throw APIError(.forbidden, "forbidden_user", "user: userAuth is not the proof for this user")
        }
    }

    /// `GET /v1/apps/{app}/users/{user}/devices[?limit=&cursor=]` (send key) → the user's devices with their
    /// installation fields, in token order, keyset-paged: `{"devices": […], "nextCursor"}`.
    func userDevices(_ request: Request, app: String, user: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let user = user.removingPercentEncodingIfNeeded
        if let problem = UserAuth.userProblem(user) { throw APIError.badRequest("user", problem) }
        let limit = try QueryLimit.parse(request, default: 100, maximum: 1000)
        var after = ""
        if let cursor = request.uri.queryParameters.get("cursor") {
            guard (try? DeviceToken(parsing: cursor)) != nil else { throw APIError.badRequest("cursor", "cursor must be a nextCursor this route returned") }
            after = cursor.lowercased()
        }
        let (registry, cursor, pageSize) = (self.registry, after, limit)
        let devices = try await registry.run { try $0.userDevices(app: app, user: user, after: cursor, limit: pageSize) }
        let items: [JSONValue] = devices.map { device in
            .object([
                ("token", .string(device.token.hex)),
            ] + Self.serviceFields(device.service, device.webPush, registrationToken: device.registrationToken) + [
                ("channels", .array(device.channels.map { .string($0) })),
                ("environment", .string(device.environment.rawValue)),
                ("registeredAt", .string(Timestamp.rfc3339(ms: device.createdMs, milliseconds: true))),
                ("lastRegisteredAt", .string(Timestamp.rfc3339(ms: device.lastRegisteredMs, milliseconds: true))),
            ] + device.installation.jsonFields)
        }
        let next: JSONValue = devices.count == limit ? (devices.last.map { .string($0.token.hex) } ?? .null) : .null
        return JSONResponse.make(.ok, .object([("devices", .array(items)), ("nextCursor", next)]))
    }

    /// `DELETE /v1/apps/{app}/users/{user}` (send key): detaches the user from every device (a forced log-out;
    /// the devices stay registered). 200 `{"user","detached": n}`; 404 when no device had the user.
    func detachUser(_ request: Request, app: String, user: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let user = user.removingPercentEncodingIfNeeded
        if let problem = UserAuth.userProblem(user) { throw APIError.badRequest("user", problem) }
        let registry = self.registry
        let n = try await registry.run { try $0.detachUser(app: app, user: user) }
        guard n > 0 else { throw APIError(.notFound, "unknown_user", "no device of \(app) has user \(user)") }
        return JSONResponse.make(.ok, .object([("user", .string(user)), ("detached", .int(Int64(n)))]))
    }

    /// `POST /v1/apps/{app}/audience-count` (send key) `{"audience": {…}, "environment"?}` →
    /// `{"count": n, "byService": {"apns": a, "webpush": w, "fcm": f}}`: how many devices a send to that audience would reach
    /// now, and how many of them through each push service (the audience plus `service = X`, counted by the same
    /// store query, so the console can say how many get the APNs payload and how many the Web Push one).
    func countAudience(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "audience-count takes application/json")
        }
        let bytes = try await readBody(request, limit: limits.deviceBodyBytes)
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw APIError.badRequest("json", "body is not valid JSON: \(error)") }
        guard let pairs = json.objectPairs else { throw APIError.badRequest("json", "body must be a JSON object") }
        if let unknown = pairs.first(where: { $0.0 != "audience" && $0.0 != "environment" }) {
            throw APIError.badRequest("field", "unknown field '\(unknown.0)'")
        }
        guard let audience = try JobFields.audience(json) else { throw APIError.badRequest("audience", "'audience' is required") }
        let environment = try JobFields.environment(json)
        let registry = self.registry
        let (n, byService) = try await registry.run { store in
            let n = try store.countAudience(app: app, environment: environment, audience: audience)
            let byService = try Self.countedServices.map { service in
                let clause = AudienceClause(field: .service, test: .equals(.string(service.rawValue)))
                return (service, try store.countAudience(app: app, environment: environment, audience: Audience(audience.clauses + [clause])))
            }
            return (n, byService)
        }
        return JSONResponse.make(.ok, .object([
            ("count", .int(Int64(n))),
            ("byService", .object(byService.map { ($0.0.rawValue, .int(Int64($0.1))) })),
        ]))
    }

    /// The services `byService` counts: every one a device can belong to.
    static let countedServices: [PushService] = PushService.allCases
}
