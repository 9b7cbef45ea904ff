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
    /// each locale's payload and size (the top-level payload is the `default` text's). When the app has Web Push
    /// (`apps.ID.webpush`), `webPush` (top level and per variant) is what a web device would get, and when it has FCM,
    /// `fcm` what an Android device would get, `hms` a Huawei phone's Push Kit message and `unifiedPush` the JSON a
    /// UnifiedPush app receives (a silent push too) — each mapped by its sender's own function (``ServicePreview``), or
    /// why it is not sent. The APNs headers' `apns-topic` only for an app with APNs.
    func previewPayload(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .send)
        guard mediaType(request) == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "a payload preview takes application/json")
        }
        let (prepared, variants) = try NotificationBody.parsePreview(
            try await readBody(request, limit: limits.notificationBodyBytes), payloadLimit: settings.apns?.payloadLimit)
        var headers: [(String, JSONValue)] = [
            ("apns-push-type", .string(prepared.pushType.rawValue)),
            ("apns-priority", .string(String(prepared.priority.rawValue))),
        ]
        if let apns = settings.apns { headers.append(("apns-topic", .string(prepared.topic(for: apns.topic)))) }
        if let expiration = prepared.expiration { headers.append(("apns-expiration", .string(String(expiration)))) }
        if let collapseId = prepared.collapseId { headers.append(("apns-collapse-id", .string(collapseId))) }
        let declarative = settings.webPush?.declarative
        let nowMs = Int64(now().timeIntervalSince1970 * 1000)
        /// `webPush`, `fcm`, `hms` and `unifiedPush` beside a payload, for the services the app has.
        func web(_ payload: [UInt8]) -> [(String, JSONValue)] {
            var fields: [(String, JSONValue)] = []
            if let declarative { fields.append(("webPush", ServicePreview.webPush(payload, prepared: prepared, declarative: declarative))) }
            if settings.fcm != nil { fields.append(("fcm", ServicePreview.fcm(payload, prepared: prepared, nowMs: nowMs))) }
            if let hms = settings.hms {
                fields.append(("hms", ServicePreview.hms(payload, prepared: prepared, settings: hms, nowMs: nowMs)))
            }
            if let harmonyos = settings.harmonyos {
                fields.append(("harmonyos", ServicePreview.harmonyos(payload, prepared: prepared, settings: harmonyos, nowMs: nowMs)))
            }
            if settings.unifiedPush != nil { fields.append(("unifiedPush", ServicePreview.unifiedPush(payload, prepared: prepared))) }
            return fields
        }
        var fields: [(String, JSONValue)] = [
            ("payload", (try? JSONValue(parsing: prepared.payload)) ?? .null),
            ("headers", .object(headers)),
            ("bytes", .int(Int64(prepared.payload.count))),
            ("limit", .int(Int64(prepared.limit))),
            ("truncated", .bool(prepared.truncated)),
        ]
        fields += web(prepared.payload)
        if !variants.isEmpty {
            let byLocale: [(String, JSONValue)] = variants.sorted { $0.key < $1.key }.map { locale, payload in
                let variant: [(String, JSONValue)] = [
                    ("payload", (try? JSONValue(parsing: payload)) ?? .null), ("bytes", .int(Int64(payload.count))),
                ]
                return (locale, .object(variant + web(payload)))
            }
            fields.append(("variants", .object(byLocale)))
        }
        return JSONResponse.make(.ok, .object(fields))
    }
}
