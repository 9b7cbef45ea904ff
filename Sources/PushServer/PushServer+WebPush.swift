import Hummingbird
import PushCore
import PushSender
import Synchronization

extension PushServer {
    /// `GET /v1/apps/{app}/webpush/key` (registration or send keys) → `{"publicKey": "<base64url>"}`: the app's VAPID
    /// public key, the `applicationServerKey` its web app passes to `pushManager.subscribe()`. 404 when the app has no
    /// Web Push; 503 when its key file cannot be read (the operator's to fix: the message names the key).
    func webPushKey(_ request: Request, app: String) async throws -> Response {
        let settings = try authorize(request, app: app, need: .registration)
        guard let webPush = settings.webPush else {
            throw APIError(.notFound, "webpush_not_configured", "app \(app) has no Web Push configured (apps.\(app).webpush)")
        }
        let publicKey = try await vapidPublicKey(app: app, webPush)
        return JSONResponse.make(.ok, .object([("publicKey", .string(publicKey))]))
    }

    /// The app's VAPID public key (base64url), read once per key file; 503 `webpush_key_unavailable` when it cannot be
    /// read.
    func vapidPublicKey(app: String, _ webPush: WebPushSettings) async throws -> String {
        try await vapidPublicKey(app: app, vapidKey: webPush.vapidKey, subject: webPush.subject, section: "webpush")
    }

    /// The public key of the VAPID key file `vapidKey` (base64url) of `apps.ID.<section>`, read once per file.
    func vapidPublicKey(app: String, vapidKey: String, subject: String, section: String) async throws -> String {
        let cacheKey = vapidKey + "\u{0}" + subject
        var publicKey = webPushKeys.withLock { $0[cacheKey] }
        if publicKey == nil {
            // Once per key file: a small read, off the cooperative pool like every blocking call.
            let loaded = try await registry.executor.run { () throws(StoreError) -> Result<String, CredentialError> in
                do throws(CredentialError) {
                    return .success(try VAPIDSigner(pemPath: vapidKey, configKey: "apps.\(app).\(section).vapidKey", subject: subject).publicKey)
                } catch {
                    return .failure(error)
                }
            }
            switch loaded {
            case .success(let key):
                webPushKeys.withLock { $0[cacheKey] = key }
                publicKey = key
            case .failure(let error):
                logger.error("webpush key unreadable", metadata: ["app": .string(app), "error": .string(error.message)])
                throw APIError(.serviceUnavailable, "webpush_key_unavailable", "the VAPID key of app \(app) cannot be read: \(error.message)")
            }
        }
        return publicKey ?? ""
    }
}
