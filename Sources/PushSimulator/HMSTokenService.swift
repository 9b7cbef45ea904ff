import Foundation
import PushCore
import Synchronization

/// The simulator's Huawei OAuth 2.0 token endpoint, as `https://oauth-login.cloud.huawei.com/oauth2/v3/token` answers
/// Push Kit senders (Huawei, "Client Credentials", developer.huawei.com/consumer/en/doc/HMSCore-Guides/
/// android-server-dev-0000001050040110): `POST /oauth2/v3/token` with an `application/x-www-form-urlencoded` body
/// `grant_type=client_credentials&client_id=<id>&client_secret=<secret>`, the same on HTTP/2 and HTTP/1.1.
///
/// A grant is 200 `{"access_token":…,"expires_in":N,"token_type":"Bearer"}`, N the configured lifetime (Huawei's is a
/// fixed 3600); the token is random, in Huawei's look (standard base64 with `+`, `/` and `=`, 104 characters), and
/// remembered with its client id and expiry for ``HMSMessageService`` to judge. A refusal is 400 with Huawei's OAuth
/// error object `{"error":<int>,"sub_error":<int>,"error_description":…}`. Huawei's error-code page was not found
/// (the `search` corpora hold none); the numbers come from real answers instead: a wrong secret is answered
/// `{"sub_error":20003,"error_description":"parameter invalid","error":1101}` (seen in a Huawei push integration's
/// notes), and 1101 is the `error` of every client-side refusal seen (20022 invalid redirect_uri, 20411, 20504 jwt
/// verify error). An unknown client id gets the wrong secret's answer (the simulator's guess: Huawei cannot tell a
/// mistyped id from a mistyped secret either); the form's own faults get 1101 with sub-errors of the simulator's own
/// (``SubError``), in Huawei's form.
final class HMSTokenService: Sendable {
    typealias Response = WebPushService.Response

    /// The path of the endpoint (Huawei's URL: `https://oauth-login.cloud.huawei.com/oauth2/v3/token`).
    static let path = "/oauth2/v3/token"
    /// A token request is a few hundred bytes; longer bodies are refused unread.
    static let maximumBodyBytes = 16 * 1024
    /// Huawei's `error` for a refused client-side request.
    static let invalidRequest: Int64 = 1101
    /// Kept after its expiry this long, so a late request still meets "expired" rather than "unknown" (ms).
    static let expiredTokenMemoryMs: Int64 = 24 * 3600 * 1000

    /// The `sub_error`s of the refusals.
    enum SubError {
        /// Huawei's, for a wrong client secret (and here for an unknown client id).
        static let parameterInvalid: Int64 = 20003
        /// The simulator's own: a required parameter is missing or the form is malformed.
        static let missingParameter: Int64 = 20001
        /// The simulator's own: `grant_type` is not `client_credentials`.
        static let unsupportedGrantType: Int64 = 20002
        /// The simulator's own: the body is not `application/x-www-form-urlencoded` (or not a POST).
        static let contentType: Int64 = 20004
    }

    /// What ``HMSMessageService`` makes of a bearer token.
    enum TokenState: Equatable {
        /// Never granted (or forgotten a day after it expired).
        case unknown
        /// Granted to `clientId` and not expired.
        case valid(clientId: String)
        /// Granted to `clientId`, past its expiry or expired early (``expireAll()``).
        case expired(clientId: String)
    }

    private struct Grant {
        var clientId: String
        var expiresAtMs: Int64
        var expiredEarly = false
    }

    private struct State {
        /// Known apps: client id → client secret.
        var apps: [String: String] = [:]
        var tokens: [String: Grant] = [:]
        var granted = 0
        var refused = 0
    }

    private let state = Mutex(State())
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    private let lifetimeSeconds: Int64

    init(
        apps: [String: String], lifetimeSeconds: Int64, recorder: SimulatorRecorder,
        clock: @escaping @Sendable () -> Int64
    ) {
        self.recorder = recorder
        self.clock = clock
        self.lifetimeSeconds = max(1, lifetimeSeconds)
        state.withLock { $0.apps = apps }
    }

    /// True for the path this service answers.
    static func handles(path: String?) -> Bool {
        guard let path else { return false }
        return path == Self.path || path.hasPrefix(Self.path + "?")
    }

    /// Trusts an app from now on (replacing the secret of a known client id).
    func trust(clientId: String, secret: String) { state.withLock { $0.apps[clientId] = secret } }

    /// Grants answered so far, and refusals.
    var counts: (granted: Int, refused: Int) { state.withLock { ($0.granted, $0.refused) } }

    /// Every token granted so far answers as expired from now on (Huawei expiring tokens before `expires_in`).
    func expireAll() {
        state.withLock { state in
            for token in state.tokens.keys { state.tokens[token]?.expiredEarly = true }
        }
    }

    func state(of token: String) -> TokenState {
        let now = clock()
        return state.withLock { state in
            guard let grant = state.tokens[token] else { return .unknown }
            return grant.expiredEarly || grant.expiresAtMs <= now
                ? .expired(clientId: grant.clientId) : .valid(clientId: grant.clientId)
        }
    }

    /// Answers one complete request.
    func respond(method: String?, contentType: String?, body: [UInt8], bodyBytes: Int) -> Response {
        func refuse(_ subError: Int64, _ description: String, status: Int = 400) -> Response {
            answer(
                status,
                [
                    ("error", .int(Self.invalidRequest)), ("sub_error", .int(subError)),
                    ("error_description", .string(description)),
                ], granted: false)
        }
        guard method == "POST" else {
            return refuse(
                SubError.contentType, "the token endpoint takes POST, not \(method ?? "nothing")", status: 405)
        }
        let mediaType = contentType?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard mediaType == "application/x-www-form-urlencoded" else {
            return refuse(
                SubError.contentType,
                "the body must be application/x-www-form-urlencoded, not \(contentType ?? "untyped")")
        }
        guard bodyBytes <= Self.maximumBodyBytes, bodyBytes == body.count, let form = OAuthTokenService.formFields(body)
        else {
            return refuse(
                SubError.missingParameter, "the body is not a valid form (each parameter once, percent-encoded)")
        }
        for name in ["grant_type", "client_id", "client_secret"] where (form[name] ?? "").isEmpty {
            return refuse(SubError.missingParameter, "missing required parameter: \(name)")
        }
        guard form["grant_type"] == "client_credentials" else {
            return refuse(SubError.unsupportedGrantType, "unsupported grant_type: \(form["grant_type"] ?? "")")
        }
        let clientId = form["client_id"] ?? ""
        let secret = form["client_secret"] ?? ""
        let now = clock()
        let token = Self.mintAccessToken()
        let granted = state.withLock { state -> Bool in
            guard let known = state.apps[clientId], known == secret else { return false }
            state.tokens = state.tokens.filter { $0.value.expiresAtMs + Self.expiredTokenMemoryMs > now }
            state.tokens[token] = Grant(clientId: clientId, expiresAtMs: now + lifetimeSeconds * 1000)
            return true
        }
        guard granted else { return refuse(SubError.parameterInvalid, "parameter invalid") }
        recorder.granted(hmsClientId: clientId, expiresIn: lifetimeSeconds, atMs: now)
        return answer(
            200,
            [
                ("access_token", .string(token)), ("expires_in", .int(lifetimeSeconds)),
                ("token_type", .string("Bearer")),
            ], granted: true)
    }

    /// A random access token in Huawei's look (push documentation shows bearer tokens such as
    /// `CF3Xl2XV6…Nm3WccUIaDg==`): 76 random bytes in standard base64, 104 characters with `+` and `/` and ending in
    /// `==`, so a sender that form-encodes or trims it is caught.
    static func mintAccessToken() -> String {
        var random = SystemRandomNumberGenerator()
        return Data((0..<76).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
    }

    private func answer(_ status: Int, _ fields: [(String, JSONValue)], granted: Bool) -> Response {
        state.withLock { if granted { $0.granted += 1 } else { $0.refused += 1 } }
        let reason =
            granted ? nil : fields.first(where: { $0.0 == "sub_error" }).map { "hms-oauth-\($0.1.encodedString)" }
        recorder.answered(status: status, reasonText: reason)
        let json = Array(JSONValue.object(fields).encodedString.utf8)
        return Response(
            status: status,
            headers: [
                ("content-type", "application/json;charset=UTF-8"), ("cache-control", "no-store"),
                ("content-length", String(json.count)),
            ], body: json)
    }
}
