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
            logger.info(
                "\(request.method) \(Self.maskedPath(request.uri.path)) \(status) \(String(format: "%.2f", ms))ms")
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
