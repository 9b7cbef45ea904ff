import Hummingbird
import PushCore
import PushSender
import PushStore

extension PushServer {
    /// `GET /v1/apps/{app}/unifiedpush/key` (registration or send keys) → `{"publicKey": "<base64url>"}`: the VAPID
    /// public key of `apps.ID.unifiedpush`, which the Android app hands its distributor (AND_3.0.0's `vapid`) so the
    /// distributor takes messages signed by this server only. 404 when the app has no UnifiedPush; 503 when the key
    /// file cannot be read.
    func unifiedPushKey(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .registration)
        guard let up = settings.unifiedPush else {
            throw APIError(.notFound, "unifiedpush_not_configured", "app \(app) has no UnifiedPush configured (apps.\(app).unifiedpush)")
        }
        let publicKey = try await vapidPublicKey(app: app, vapidKey: up.vapidKey, subject: up.subject, section: "unifiedpush")
        return JSONResponse.make(.ok, .object([("publicKey", .string(publicKey))]))
    }

    /// UnifiedPush's discovery for a registration (``UnifiedPushDiscovery``), before anything is stored: the endpoint
    /// a client gave must answer as a distributor's push resource, on an address the app's rule allows. A definite
    /// other answer (a status, a redirect, another body, a refused address) is a 400 naming `subscription.endpoint`;
    /// no answer (timeout, connection, TLS) a 503 the client retries (`discovery_unavailable`). Requests of other
    /// services pass untouched.
    func discoverUnifiedPush(_ fields: RegistrationFields, app: String, settings: AppSettings) async throws {
        guard let subscription = fields.unifiedPush, let unifiedPush = settings.unifiedPush else { return }
        let proxy = try configuration.proxy(for: settings).map { try SenderProxy($0) }
        switch await UnifiedPushDiscovery.run(
            subscription.endpoint, policy: unifiedPush.hostPolicy, caFile: unifiedPush.caFile, proxy: proxy)
        {
        case .unifiedPush:
            return
        case .refused(let why):
            throw APIError.badRequest("subscription.endpoint", "subscription.endpoint failed UnifiedPush discovery: \(why)")
        case .unreachable(let why):
            logger.warning("unifiedpush discovery unreachable", metadata: ["app": .string(app), "error": .string(why)])
            throw APIError(.serviceUnavailable, "discovery_unavailable", "UnifiedPush discovery could not reach the endpoint; retry later: \(why)")
        }
    }
}
