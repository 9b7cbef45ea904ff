import Hummingbird

/// The API's paths and the methods each serves, as `docs/openapi.yaml` documents them (a test holds the two
/// equal). A request for a known path with another method is answered 405 with `Allow`, not 404.
enum RouteTable {
    /// Path templates (`:name` segments match one segment) and their methods.
    static let routes: [(template: String, methods: [HTTPRequest.Method])] = [
        ("/v1/apps/:app/devices", [.post]),
        ("/v1/apps/:app/devices/count", [.get]),
        ("/v1/apps/:app/devices/:token", [.get, .delete]),
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
        ("/v1/apps/:app/notifications", [.get, .post]),
        ("/v1/apps/:app/notifications/:id", [.get, .delete]),
        ("/healthz", [.get]),
        ("/metrics", [.get]),
    ]

    /// The console's static files (README "Console"; not API routes, so not in the OpenAPI description).
    static let consoleRoutes: [(template: String, methods: [HTTPRequest.Method])] = [
        ("/console", [.get]),
        ("/console/", [.get]),
        ("/console/console.js", [.get]),
        ("/console/console.css", [.get]),
    ]

    /// The methods `path` is served with, or nil when no route has that path. A literal segment beats a
    /// parameter (`devices/count` is not a token).
    static func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (literals: Int, methods: [HTTPRequest.Method])?
        for route in routes + consoleRoutes {
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
