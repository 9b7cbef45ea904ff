import Hummingbird
import NIOCore
import PushCore
import PushStore

/// An API error: an HTTP status and a JSON body `{"error":{"code":"…","message":"…"}}`.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public let status: HTTPResponse.Status
    /// A stable machine-readable code (`invalid_token`, `unauthorized`, …).
    public let code: String
    /// A one-line human-readable message.
    public let message: String
    /// Extra headers (e.g. `Retry-After`).
    public var headers: HTTPFields = [:]

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// Builds the JSON response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        let body: JSONValue = .object([("error", .object([("code", .string(code)), ("message", .string(message))]))])
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body.encoded)))
    }

    static func badRequest(_ field: String, _ message: String) -> APIError {
        APIError(.badRequest, "invalid_\(field)", message)
    }

    /// Seconds a client is told to wait (`Retry-After`) when the database is busy or unreachable: a lock held by
    /// an import or a trim, or a PostgreSQL restart, usually passes within a few seconds.
    static let databaseRetryAfterSeconds = 2

    /// 503 with `Retry-After` for a database that is busy (`database_busy`: locked, a lock or serialization
    /// timeout, no store thread free in time) or unreachable (`database_unavailable`); the message names the cause.
    static func databaseUnavailable(_ error: StoreError) -> APIError {
        let busy = error.code == .busy
        var answer = APIError(
            .serviceUnavailable, busy ? "database_busy" : "database_unavailable",
            "\(busy ? "the database is busy" : "the database is unavailable"): \(error.message); nothing was stored, retry later")
        answer.headers[.retryAfter] = "\(databaseRetryAfterSeconds)"
        return answer
    }
}

/// JSON responses.
enum JSONResponse {
    /// A response with a JSON body.
    static func make(_ status: HTTPResponse.Status, _ value: JSONValue, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: value.encoded)))
    }
}

/// Turns every error — ours, Hummingbird's (404, 405), body-size limits — into the JSON error shape.
/// A store failure is never a 500 when the database is only busy or unreachable: it is a 503 with `Retry-After`
/// (``APIError/databaseUnavailable(_:)``), and `/healthz` hears of it (`unavailable`).
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The listener whose routes decide between 404 and 405.
    let listener: PushServer.Listener
    /// Told of every request that found the database unavailable.
    var unavailable: @Sendable (StoreError) -> Void = { _ in }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as StoreError where error.kind == .unavailable {
            unavailable(error)
            throw APIError.databaseUnavailable(error)
        } catch let error as StoreError where error.kind == .invalidInput {
            throw APIError(.badRequest, "invalid_input", error.message)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "body_too_large", "request body is larger than this route allows")
        } catch let error as HTTPResponseError {
            if error.status == .notFound, let allowed = RouteTable.methods(for: request.uri.path, on: listener), !allowed.contains(request.method) {
                var notAllowed = APIError(.methodNotAllowed, "method_not_allowed", "\(request.method) is not served here; use \(allowed.map(\.rawValue).joined(separator: ", "))")
                notAllowed.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
                throw notAllowed
            }
            let code: String
            switch error.status {
            case .notFound: code = "not_found"
            case .methodNotAllowed: code = "method_not_allowed"
            case .contentTooLarge: code = "body_too_large"
            default: code = "http_\(error.status.code)"
            }
            throw APIError(error.status, code, error.status.reasonPhrase.isEmpty ? "HTTP \(error.status.code)" : error.status.reasonPhrase)
        } catch {
            context.logger.error("internal error: \(String(describing: error))")
            throw APIError(.internalServerError, "internal", "internal error; see the server log")
        }
    }
}
