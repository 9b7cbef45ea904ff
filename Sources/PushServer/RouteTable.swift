import Hummingbird

/// The API's paths and the methods each serves, as `docs/openapi.yaml` documents them (a test holds the two
/// equal). A request for a known path with another method is answered 405 with `Allow`, not 404.
enum RouteTable {
    /// Path templates (`:name` segments match one segment) and their methods.
    static let routes: [(template: String, methods: [HTTPRequest.Method])] = [
        ("/v1/apps/:app/devices", [.post]),
        ("/v1/apps/:app/devices/count", [.get]),
        ("/v1/apps/:app/devices/lookup", [.get]),
        ("/v1/apps/:app/webpush/key", [.get]),
        ("/v1/apps/:app/unifiedpush/key", [.get]),
        ("/v1/apps/:app/devices/:token", [.get, .delete]),
        ("/v1/apps/:app/users/:user", [.delete]),
        ("/v1/apps/:app/users/:user/devices", [.get]),
        ("/v1/apps/:app/audience-count", [.post]),
        ("/v1/apps/:app/live-activities/push-to-start-tokens", [.post]),
        ("/v1/apps/:app/live-activities/push-to-start-tokens/:token", [.delete]),
        ("/v1/apps/:app/live-activities/update-tokens", [.post]),
        ("/v1/apps/:app/live-activities/update-tokens/:token", [.delete]),
        ("/v1/apps/:app/live-activities/activities/:activity", [.delete]),
        ("/v1/apps/:app/live-activities/start", [.post]),
        ("/v1/apps/:app/live-activities/activities/:activity/update", [.post]),
        ("/v1/apps/:app/live-activities/activities/:activity/end", [.post]),
        ("/v1/apps/:app/broadcast-channels", [.get, .post]),
        ("/v1/apps/:app/broadcast-channels/:channel", [.get, .delete]),
        ("/v1/apps/:app/broadcast-channels/:channel/notifications", [.post]),
        ("/v1/apps/:app/payload-preview", [.post]),
        ("/v1/apps/:app/deliveries", [.get]),
        ("/v1/apps/:app/inbox", [.get, .delete]),
        ("/v1/apps/:app/notifications", [.get, .post]),
        ("/v1/apps/:app/notifications/:id", [.get, .delete]),
        ("/healthz", [.get]),
        ("/livez", [.get]),
        ("/readyz", [.get]),
    ]

    /// What only the admin listener serves (also in the OpenAPI description, marked so).
    static let adminRoutes: [(template: String, methods: [HTTPRequest.Method])] = [
        ("/healthz/details", [.get]),
        ("/metrics", [.get]),
    ]

    /// The console's static files (README "Console"; not API routes, so not in the OpenAPI description).
    static let consoleRoutes: [(template: String, methods: [HTTPRequest.Method])] = [
        ("/console", [.get]),
        ("/console/", [.get]),
        ("/console/console.js", [.get]),
        ("/console/console.css", [.get]),
    ]

    /// The routes `listener` serves: the public one the API and `/healthz`, the admin one everything.
    static func served(by listener: PushServer.Listener) -> [(template: String, methods: [HTTPRequest.Method])] {
        listener == .admin ? routes + adminRoutes + consoleRoutes : routes
    }

    /// The methods `path` is served with on `listener`, or nil when it serves no route with that path (a 404, not
    /// a 405: the public listener does not admit that `/metrics` exists). A literal segment beats a parameter
    /// (`devices/count` is not a token).
    static func methods(for path: String, on listener: PushServer.Listener) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (literals: Int, methods: [HTTPRequest.Method])?
        for route in served(by: listener) {
            let parts = route.template.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard parts.count == segments.count else { continue }
            var literals = 0
            var matches = true
            for (part, segment) in zip(parts, segments) {
                if part.hasPrefix(":") {
                    if segment.isEmpty { matches = false; break }
                } else if part == segment {
                    literals += 1
                } else {
                    matches = false
                    break
                }
            }
            if matches, literals > (best?.literals ?? -1) { best = (literals, route.methods) }
        }
        return best?.methods
    }
}
