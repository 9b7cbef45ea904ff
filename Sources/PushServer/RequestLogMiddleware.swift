import Hummingbird
import Logging
import PushCore

/// One log line per request: method, route, status, duration and a masked token; never keys or bodies.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var status = 500
        defer {
            let elapsed = ContinuousClock.now - start
            let route = context.endpointPath ?? "unmatched"
            metrics.request(route: route, status: status)
            metrics.requestDuration.record(elapsed)
            let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            let path = Self.maskedPath(request.uri.path)
            var metadata: Logger.Metadata = [
                "method": "\(request.method)", "path": "\(path)", "status": "\(status)",
                "durationMs": "\(String(format: "%.2f", ms))",
            ]
            if let app = Self.app(inPath: request.uri.path) { metadata["app"] = "\(app)" }
            logger.info("\(request.method) \(path) \(status) \(String(format: "%.2f", ms))ms", metadata: metadata)
        }
        do {
            let response = try await next(request, context)
            status = Int(response.status.code)
            return response
        } catch let error as HTTPResponseError {
            status = Int(error.status.code)
            throw error
        }
    }

    /// The app id of a `/v1/apps/{app}/…` path (only a valid one: the path is the client's).
    static func app(inPath path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count >= 3, parts[0] == "v1", parts[1] == "apps", PushConfiguration.isValidAppId(String(parts[2])) else {
            return nil
        }
        return String(parts[2])
    }

    /// The path with any token-like segment masked (`/v1/apps/a/devices/740f47…78ad`).
    static func maskedPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.count > 16 ? DeviceToken.mask(String(segment)) : String(segment)
        }.joined(separator: "/")
    }
}

extension String {
    /// `String(format:)` for the one float we log, without Foundation's locale.
    fileprivate init(format: String, _ value: Double) {
        let scaled = (value * 100).rounded() / 100
        self = "\(scaled)"
    }
}
