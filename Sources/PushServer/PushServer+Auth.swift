import Foundation
import Hummingbird
import NIOCore
import PushCore

extension PushServer {
    /// Checks the bearer key for `app` and the rate limit. Registration keys may only register and
    /// unregister; send keys may do everything. Missing or unknown key → 401; another app's key → 403.
    func authorize(_ request: Request, app: String, need: APIKeyKind) throws(APIError) -> AppSettings {
        try authorizeKey(request, app: app, need: need).settings
    }

    /// ``authorize(_:app:need:)``, also saying which kind of key it was (a send key may attach users).
    func authorizeKey(_ request: Request, app: String, need: APIKeyKind) throws(APIError) -> (settings: AppSettings, kind: APIKeyKind) {
        guard let header = request.headers[.authorization] else {
            throw unauthorized("missing Authorization: Bearer <key>")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw unauthorized("Authorization must be 'Bearer <key>'")
        }
        let hashed = APIKeys.hash(String(parts[1]))  // hashed once: lookup and rate-limit bucket
        guard let grant = keys.grant(forHash: hashed) else { throw unauthorized("unknown API key") }
        if let wait = limiter.acquire(hashed) {
            var error = APIError(.tooManyRequests, "rate_limited", "too many requests for this key; retry later")
            error.headers[.retryAfter] = String(Int(wait.rounded(.up)))
            throw error
        }
        guard let settings = configuration.apps[app] else {
            throw APIError(.notFound, "unknown_app", "unknown app '\(app)'")
        }
        guard grant.app == app else {
            throw APIError(.forbidden, "forbidden", "this key belongs to another app")
        }
        if need == .send && grant.kind == .registration {
            throw APIError(.forbidden, "forbidden", "registration keys may only register and unregister devices")
        }
        return (settings, grant.kind)
    }

    private func unauthorized(_ message: String) -> APIError {
        var error = APIError(.unauthorized, "unauthorized", message)
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }

    /// Collects the body up to `limit` bytes (413 beyond), checking Content-Length first.
    func readBody(_ request: Request, limit: Int) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, "body_too_large", "body is \(length) bytes; this route accepts at most \(limit)")
        }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "body_too_large", "body is larger than \(limit) bytes")
        }
    }

    /// The media type without parameters, lowercased (nil when absent).
    func mediaType(_ request: Request) -> String? {
        guard let value = request.headers[.contentType] else { return nil }
        return value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }
}
