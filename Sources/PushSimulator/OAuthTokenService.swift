import _CryptoExtras
import Foundation
import PushCore
import Synchronization

/// The simulator's OAuth 2.0 token endpoint, as Google's (`https://oauth2.googleapis.com/token`) answers FCM senders:
/// `POST /token` with an `application/x-www-form-urlencoded` body `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`
/// `&assertion=<JWT>`, the same on HTTP/2 and HTTP/1.1 (Google's client libraries speak HTTP/1.1).
///
/// The assertion is verified strictly (``GrantAssertionVerifier``) against the service accounts the simulator trusts;
/// its `aud` must be this endpoint's URL (`https://<authority>/token`), the account's own `token_uri`, or Google's
/// token URL (which google-auth always signs, and Google accepts). A grant answers 200
/// `{"access_token":…,"expires_in":N,"token_type":"Bearer"}`; a refusal answers 400 `{"error":…,"error_description":…}`
/// in Google's words (e.g. `invalid_grant` / `Invalid JWT Signature.`). Granted tokens are random and remembered
/// until they expire (``SimulatorConfiguration/accessTokenLifetime``), for the FCM endpoint to check.
final class OAuthTokenService: Sendable {
    typealias Response = WebPushService.Response

    /// The path of the endpoint.
    static let path = "/token"
    /// A token request is a few kilobytes at most; longer bodies are refused unread.
    static let maximumBodyBytes = 16 * 1024

    private struct State {
        var accounts: [String: GrantAssertionVerifier.ServiceAccountKey] = [:]
        /// Granted tokens: when they expire (ms since 1970) and the project their account belongs to.
        var tokens: [String: (expiresAtMs: Int64, projectId: String?)] = [:]
        var granted = 0
        var refused = 0
    }

    private let state = Mutex(State())
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    private let lifetimeSeconds: Int64

    init(
        accounts: [SimulatorServiceAccount], lifetimeSeconds: Int64, recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64
    ) throws(SimulatorError) {
        self.recorder = recorder
        self.clock = clock
        self.lifetimeSeconds = max(1, lifetimeSeconds)
        for account in accounts { try trust(account) }
    }

    /// True for the path this service answers.
    static func handles(path: String?) -> Bool {
        guard let path else { return false }
        return path == Self.path || path.hasPrefix(Self.path + "?")
    }

    /// Trusts `account` from now on (replacing an account with the same `client_email`).
    func trust(_ account: SimulatorServiceAccount) throws(SimulatorError) {
        let key: _RSA.Signing.PublicKey
        do { key = try _RSA.Signing.PublicKey(pemRepresentation: account.publicKeyPEM) } catch {
            throw SimulatorError(.badConfiguration, "service account \(account.clientEmail): not an RSA public key of 2048 bits or more")
        }
        state.withLock {
            $0.accounts[account.clientEmail] = .init(
                keyId: account.privateKeyId, publicKey: key, tokenURI: account.tokenURI, projectId: account.projectId)
        }
    }

    /// Grants answered so far, and refusals.
    var counts: (granted: Int, refused: Int) { state.withLock { ($0.granted, $0.refused) } }

    /// True while `token` is one this endpoint granted and it has not expired.
    func isValid(accessToken token: String) -> Bool { grant(of: token) != nil }

    /// The grant of an unexpired `token`: the project of the account it was granted to (nil inside: any project).
    func grant(of token: String) -> String?? {
        let now = clock()
        return state.withLock { state -> String?? in
            guard let entry = state.tokens[token], entry.expiresAtMs > now else { return nil }
            return .some(entry.projectId)
        }
    }

    /// Answers one complete request.
    func respond(method: String?, path: String?, authority: String?, contentType: String?, body: [UInt8], bodyBytes: Int) -> Response {
        guard method == "POST" else {
            return answer(405, ["error": "invalid_request", "error_description": "the token endpoint takes POST, not \(method ?? "nothing")"], granted: false)
        }
        func refuse(_ error: String, _ description: String) -> Response {
            answer(400, ["error": error, "error_description": description], granted: false)
        }
        guard bodyBytes <= Self.maximumBodyBytes, bodyBytes == body.count else {
            return refuse("invalid_request", "the request body is \(bodyBytes) bytes; a token request has at most \(Self.maximumBodyBytes)")
        }
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/x-www-form-urlencoded" else {
            return refuse("invalid_request", "the body must be application/x-www-form-urlencoded, not \(contentType ?? "untyped")")
        }
        guard let form = Self.formFields(body) else {
            return refuse("invalid_request", "the body is not a valid form (each parameter once, percent-encoded)")
        }
        guard let grantType = form["grant_type"] else { return refuse("invalid_request", "Missing required parameter: grant_type") }
        guard grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return refuse("unsupported_grant_type", "Invalid grant_type: \(grantType)")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return refuse("invalid_request", "Missing required parameter: assertion")
        }
        let (accounts, ownURIs) = state.withLock { state in
            (state.accounts, Set(state.accounts.values.compactMap(\.tokenURI)))
        }
        var audiences = ownURIs.union([GrantAssertionVerifier.googleTokenEndpoint])
        if let authority { audiences.insert("https://" + WebPushService.origin(authority: authority) + Self.path) }
        let now = clock()
        switch GrantAssertionVerifier.verify(assertion: assertion, accounts: accounts, audiences: audiences, nowSeconds: now / 1000) {
        case .failure(let refusal):
            return refuse(refusal.error, refusal.description)
        case .success(let verified):
            let projectId = accounts[verified.clientEmail]?.projectId
            var random = SystemRandomNumberGenerator()
            let token = "ya29.sim-" + StrictBase64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
            state.withLock { state in
                state.tokens = state.tokens.filter { $0.value.expiresAtMs > now }
                state.tokens[token] = (now + lifetimeSeconds * 1000, projectId)
            }
            recorder.granted(clientEmail: verified.clientEmail, expiresIn: lifetimeSeconds, atMs: now)
            let json: [(String, JSONValue)] = [
                ("access_token", .string(token)), ("expires_in", .int(lifetimeSeconds)), ("token_type", .string("Bearer")),
            ]
            return answer(200, json, granted: true)
        }
    }

    private func answer(_ status: Int, _ fields: [String: String], granted: Bool) -> Response {
        answer(status, [("error", .string(fields["error"] ?? "")), ("error_description", .string(fields["error_description"] ?? ""))], granted: granted)
    }

    private func answer(_ status: Int, _ fields: [(String, JSONValue)], granted: Bool) -> Response {
        state.withLock { if granted { $0.granted += 1 } else { $0.refused += 1 } }
        recorder.answered(status: status, reasonText: granted ? nil : fields.first?.1.stringValue)
        let json = Array(JSONValue.object(fields).encodedString.utf8)
        return Response(status: status, headers: [
            ("content-type", "application/json; charset=utf-8"), ("cache-control", "no-store"), ("pragma", "no-cache"),
            ("content-length", String(json.count)),
        ], body: json)
    }

    /// An `application/x-www-form-urlencoded` body's fields (`+` is a space, `%XX` a byte); nil when a name appears
    /// twice, a pair has no `=`, or an escape or the decoded bytes are malformed.
    static func formFields(_ body: [UInt8]) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")),
                let name = decode(pair[pair.startIndex..<equals]), let value = decode(pair[(equals + 1)...]),
                fields[name] == nil
            else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) else { return nil }
                out.append(high << 4 | low)
                i += 2
            } else {
                out.append(byte)
            }
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
