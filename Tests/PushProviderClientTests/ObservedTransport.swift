import Foundation
import PushProviderClient
import Synchronization

/// The real ``URLSessionTransport`` with a record of every request that went through it and the status it got
/// (nil: no answer) — not a mock: every request reaches the real server. It lets a test say "one request", "not
/// retried", "nothing duplicated".
final class ObservedTransport: HTTPTransport {
    /// One request and what came of it.
    struct Exchange: Sendable {
        let request: HTTPRequest
        let status: Int?
        let retryAfter: String?

        /// The JSON body as an object.
        var body: [String: Any] {
            guard let data = request.body else { return [:] }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }

        /// `METHOD path` as sent, percent-encoded (without the `/v1/apps/example` prefix).
        var route: String {
            let path = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
            return request.method + " " + path.replacingOccurrences(of: "/v1/apps/example", with: "")
        }
    }

    private let inner = URLSessionTransport()
    private let log = Mutex<[Exchange]>([])

    /// Everything sent so far.
    var exchanges: [Exchange] { log.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            let response = try await inner.send(request)
            log.withLock { $0.append(Exchange(request: request, status: response.status, retryAfter: response.headers["retry-after"])) }
            return response
        } catch {
            log.withLock { $0.append(Exchange(request: request, status: nil, retryAfter: nil)) }
            throw error
        }
    }
}
