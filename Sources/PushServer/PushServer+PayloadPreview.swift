import Hummingbird
import PushCore

extension PushServer {
    func addPayloadPreviewRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:app/payload-preview") { request, context in
            try await self.previewPayload(request, app: try context.parameters.require("app"))
        }
    }

    /// `POST /v1/apps/{app}/payload-preview` (send keys only): the payload and APNs headers a send job with these
    /// content fields would use, and its size — built and validated by the same code as the send job, so a
    /// 400 here is the 400 the send would get. Nothing is stored or sent. With per-locale text, `variants` shows
    /// each locale's payload and size (the top-level payload is the `default` text's).
    func previewPayload(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "a payload preview takes application/json")
        }
        let (prepared, variants) = try NotificationBody.parsePreview(
            try await readBody(request, limit: limits.notificationBodyBytes), payloadLimit: settings.payloadLimit)
        var headers: [(String, JSONValue)] = [
            ("apns-push-type", .string(prepared.pushType.rawValue)),
            ("apns-priority", .string(String(prepared.priority.rawValue))),
            ("apns-topic", .string(prepared.topic(for: settings.topic))),
        ]
        if let expiration = prepared.expiration { headers.append(("apns-expiration", .string(String(expiration)))) }
        if let collapseId = prepared.collapseId { headers.append(("apns-collapse-id", .string(collapseId))) }
        return JSONResponse.make(.ok, .object([
            ("payload", (try? JSONValue(parsing: prepared.payload)) ?? .null),
            ("headers", .object(headers)),
            ("bytes", .int(Int64(prepared.payload.count))),
            ("limit", .int(Int64(prepared.limit))),
            ("truncated", .bool(prepared.truncated)),
        ] + (variants.isEmpty ? [] : [("variants", .object(variants.sorted { $0.key < $1.key }.map { locale, payload in
            (locale, .object([("payload", (try? JSONValue(parsing: payload)) ?? .null), ("bytes", .int(Int64(payload.count)))]))
        }))])))
    }
}
