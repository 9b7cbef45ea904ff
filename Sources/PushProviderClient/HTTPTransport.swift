import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request as the client makes it: small, `Sendable`, and independent of `URLRequest`, so a transport
/// can be replaced (or wrapped to watch the requests go by) without touching the client.
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `POST`, `DELETE`.
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// Seconds before the request counts as failed.
    public var timeout: TimeInterval

    /// Creates one.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP answer: status, headers (names lowercased) and body.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields, names lowercased.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates one (header names are lowercased here).
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }
}

/// How the client reaches the server. Passed in so that tests (and apps with their own networking) choose it; a
/// thrown error means no HTTP answer arrived, which the client treats as "unreachable, try later".
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// The default transport: `URLSession` (FoundationNetworking on Linux, which is libcurl underneath).
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// A transport on `session` (an ephemeral session by default: the client keeps no cookies or cache).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) {
        self.session = session
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        // dataTask with a continuation rather than `data(for:)`: the same code on iOS 15 and on Linux's Foundation.
        return try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let http = response as? HTTPURLResponse {
                    var headers: [String: String] = [:]
                    for (name, value) in http.allHeaderFields {
                        if let name = name as? String, let value = value as? String { headers[name] = value }
                    }
                    continuation.resume(returning: HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
                } else {
                    continuation.resume(throwing: PushProviderClientError(code: "bad_response", message: "not an HTTP response"))
                }
            }
            task.resume()
        }
    }
}
