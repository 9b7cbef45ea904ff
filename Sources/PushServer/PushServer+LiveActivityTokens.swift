import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addLiveActivityTokenRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/live-activities/push-to-start-tokens") { request, context in
            try await self.registerLiveActivityToken(request, app: try context.parameters.require("app"), kind: .pushToStart)
        }
        router.post("/v1/apps/:app/live-activities/update-tokens") { request, context in
            try await self.registerLiveActivityToken(request, app: try context.parameters.require("app"), kind: .update)
        }
        router.delete("/v1/apps/:app/live-activities/push-to-start-tokens/:token") { request, context in
            try await self.unregisterLiveActivityToken(
                request, app: try context.parameters.require("app"), token: try context.parameters.require("token"))
        }
        router.delete("/v1/apps/:app/live-activities/update-tokens/:token") { request, context in
            try await self.unregisterLiveActivityToken(
                request, app: try context.parameters.require("app"), token: try context.parameters.require("token"))
        }
        router.delete("/v1/apps/:app/live-activities/activities/:activity") { request, context in
            try await self.endActivityTokens(
                request, app: try context.parameters.require("app"), activity: try context.parameters.require("activity"))
        }
    }

    /// `POST …/live-activities/push-to-start-tokens` or `…/update-tokens` (registration keys): 201 new, 200 refreshed
    /// or replacing the installation's (activity's) previous token, which is named in `replaced`.
    func registerLiveActivityToken(_ request: Request, app: String, kind: LiveActivityTokenKind) async throws -> Response {
        let settings = try authorize(request, app: app, need: .registration)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "Live Activity tokens are registered with application/json")
        }
        let registration = try LiveActivityTokenBody.parse(
            try await readBody(request, limit: limits.deviceBodyBytes), app: app, kind: kind,
            defaultEnvironment: try Self.apns(settings, app: app).defaultEnvironment)
        let registry = self.registry
        let outcome = try await registry.run { try $0.registerLiveActivityToken(registration) }
        var fields: [(String, JSONValue)] = [
            ("token", .string(registration.token.hex)), ("kind", .string(kind.rawValue)),
            ("environment", .string((registration.environment ?? .production).rawValue)),
        ]
        if let installation = registration.installation { fields.append(("installation", .string(installation))) }
        if let type = registration.attributesType { fields.append(("attributesType", .string(type))) }
        if let activity = registration.activityId { fields.append(("activityId", .string(activity))) }
        if kind == .pushToStart {
            fields.append(("channels", .array(Array(Set(registration.channels ?? [])).sorted().map { .string($0) })))
        }
        let (status, outcomeFields) = Self.registrationAnswer(outcome)
        return JSONResponse.make(status, .object(fields + outcomeFields))
    }

    /// `DELETE …/live-activities/{push-to-start,update}-tokens/{token}` (registration keys): 204, or 404.
    func unregisterLiveActivityToken(_ request: Request, app: String, token: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .registration)
        let parsed: DeviceToken
        do { parsed = try DeviceToken(parsing: token.removingPercentEncodingIfNeeded) } catch {
            throw APIError.badRequest("token", "token: \(error.description)")
        }
        let registry = self.registry
        guard try await registry.run({ try $0.unregisterLiveActivityToken(app: app, token: parsed) }) else {
            throw APIError(.notFound, "unknown_token", "Live Activity token \(parsed.masked) is not registered for \(app)")
        }
        return Response(status: .noContent)
    }

    /// `DELETE …/live-activities/activities/{activity}` (registration keys): the app's activity ended on the device;
    /// its update tokens are removed. 204, or 404 when it had none.
    func endActivityTokens(_ request: Request, app: String, activity: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .registration)
        let id = activity.removingPercentEncodingIfNeeded
        if let problem = LiveActivityRegistration.idProblem(id, "activity") { throw APIError.badRequest("activity", problem) }
        let registry = self.registry
        guard try await registry.run({ try $0.endActivity(app: app, activityId: id) }) > 0 else {
            throw APIError(.notFound, "unknown_activity", "activity \(id) has no update token registered for \(app)")
        }
        return Response(status: .noContent)
    }
}
