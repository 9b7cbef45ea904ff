import Foundation

/// Why the client could not do what it was asked, as the server says it (`{"error":{"code","message"}}`) or as
/// the client found it. A struct with a code and a message, like every public error of PushProvider, so an app
/// can switch on `code` and log `message`.
///
/// Client-side codes: `unreachable` (no HTTP answer: the change waits in the outbox), `no_token` (the device
/// registration waits for a token from APNs), `state_unreadable` (the state file is damaged), `invalid_token`
/// (not hex), `bad_response` (an answer that is not the API's). Server codes are the API's own (`invalid_timeZone`,
/// `forbidden_user`, `rate_limited`, `database_unavailable`, …).
public struct PushProviderClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short machine-readable code.
    public var code: String
    /// A human-readable message.
    public var message: String
    /// The HTTP status that carried it, or nil when no answer came (or the client found it itself).
    public var status: Int?

    /// Creates one.
    public init(code: String, message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    public var description: String {
        status.map { "\(code) (HTTP \($0)): \(message)" } ?? "\(code): \(message)"
    }

    /// The error an HTTP answer carries: the API's error body when it has one, else the status.
    static func from(_ response: HTTPResponse) -> PushProviderClientError {
        struct Body: Decodable {
            struct Inner: Decodable { let code: String; let message: String }
            let error: Inner
        }
        if let body = try? JSONDecoder().decode(Body.self, from: response.body) {
            return PushProviderClientError(code: body.error.code, message: body.error.message, status: response.status)
        }
        let text = String(decoding: response.body.prefix(200), as: UTF8.self)
        return PushProviderClientError(code: "http_\(response.status)", message: text, status: response.status)
    }
}
