import _CryptoExtras
import Foundation
import PushCore
import Synchronization

/// A HarmonyOS service account the simulator trusts: the key file's `sub_account`, `key_id`, `project_id` and the
/// public half of its `private_key`. Parsed here on its own (it shares no code with PushSender's signing).
public struct SimulatorHarmonyOSAccount: @unchecked Sendable {
    // @unchecked: _RSA's key types are immutable but lack the Sendable annotation.
    public var subAccount: String
    public var keyId: String
    public var projectId: String
    var publicKey: _RSA.Signing.PublicKey

    /// Parses a key file (`project_id`, `key_id`, `private_key`, `sub_account`); `source` names it in errors.
    public init(keyFileJSON json: some Collection<UInt8>, source: String) throws(SimulatorError) {
        func refuse(_ why: String) -> SimulatorError { SimulatorError(.badConfiguration, "\(source): \(why)") }
        guard let root = try? JSONValue(parsing: json), root.objectPairs != nil else { throw refuse("not a service-account key file") }
        func field(_ name: String) throws(SimulatorError) -> String {
            guard let text = root[name]?.stringValue, !text.isEmpty else { throw refuse("missing \(name)") }
            return text
        }
        subAccount = try field("sub_account")
        keyId = try field("key_id")
        projectId = try field("project_id")
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key")) else {
            throw refuse("private_key is not an RSA private key (PEM, 2048 bits or more)")
        }
        publicKey = key.publicKey
    }

    /// A new development key file (what `pushctl harmonyos account new` writes): a fresh 2048-bit key, random ids.
    public static func makeDevelopment(projectId: String) throws(SimulatorError) -> String {
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch {
            throw SimulatorError(.badConfiguration, "cannot generate an RSA key: \(error)")
        }
        var random = SystemRandomNumberGenerator()
        let keyId = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        let subAccount = (0..<10).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
        let fields: [(String, JSONValue)] = [
            ("project_id", .string(projectId)), ("key_id", .string(keyId)),
            ("private_key", .string(key.pkcs8PEMRepresentation + "\n")), ("sub_account", .string(subAccount)),
            ("auth_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/authorize")),
            ("token_uri", .string(HarmonyOSMessageService.audience)),
            ("auth_provider_cert_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/certs")),
            ("client_cert_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/x509?client_id=" + subAccount)),
        ]
        return JSONValue.object(fields).encodedString + "\n"
    }
}

/// A message the simulator's Push Kit scenario endpoint (HarmonyOS) accepted, one per token delivered.
public struct ReceivedHarmonyOSMessage: Sendable, Equatable {
    /// The URL's project ID.
    public var projectId: String
    /// The token delivered to.
    public var token: String
    /// The `push-type` header.
    public var pushType: Int
    /// The body as received, without `target` (`payload` and `pushOptions`).
    public var message: JSONValue
    public var requestId: String
    public var receivedAtMs: Int64

    /// `{"service":"harmonyos","projectId","token","pushType","requestId","receivedAt","message"}`.
    public func jsonLine(into out: inout [UInt8]) {
        JSONValue.object([
            ("service", .string("harmonyos")), ("projectId", .string(projectId)), ("token", .string(token)),
            ("pushType", .int(Int64(pushType))), ("requestId", .string(requestId)), ("receivedAt", .int(receivedAtMs)),
            ("message", message),
        ]).encode(into: &out)
    }
}

/// The simulator's Huawei Push Kit scenario API for HarmonyOS NEXT, `POST /v3/{projectId}/messages:send` (Huawei's
/// REST API reference: "Request Body Structure", "Request Body Parameters", "Response Parameters"; "Generating a JWT
/// Based on a Service Account"), as strict as Huawei or stricter. Every answer is `{"code","msg","requestId"}`, decided
/// in this order:
///
/// 1. Anything but a POST to `/v3/{projectId}/messages:send`: 404 with no code.
/// 2. `Authorization: Bearer <JWT>`: the JWT's form, `alg` PS256, `iss` a trusted `sub_account`, `kid` its `key_id`,
///    the PSS signature, `aud` Huawei's token URI, `exp` − `iat` at most 3600 s, and the account's project the URL's:
///    401 `80200001`; past `exp` (or refused by ``expireAll()``): 401 `80200003`.
/// 3. `push-type`: missing or not a number, 400 `80100001`; a type the simulator does not play (only 0, alert, and 6,
///    background): 400 `80100001`.
/// 4. `Content-Type` not `application/json`: 400 `80100003`.
/// 5. The body: a body over 4096 bytes without its tokens, 400 `80300008`; not JSON or no `payload` object, 400
///    `80100003`; `target.token` not 1…1000 strings, 400 `80300010`; push-type 0: `payload.notification` with a
///    documented `category` (else `80100003` naming it), non-empty `title` and `body`, `clickAction.actionType` 0 or
///    1; push-type 6: `payload.extraData` a string; `pushOptions.ttl` 0…1296000.
/// 6. Each token: well-formed and not invalidated (``invalidate(_:)``, `--harmonyos-invalid`). All bad: 400
///    `80300007` with `msg` `{"illegalTokens":{"tokenFormatError":[…],"noRight":[…]},"failure":N}`; some bad: 200
///    `80100000` with the same form and `success`; all good: 200 `80000000`.
final class HarmonyOSMessageService: Sendable {
    typealias Response = WebPushService.Response

    static let audience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
    static let maximumMessageBytes = 4096
    static let maximumTokens = 1000
    static let maximumBodyBytes = maximumMessageBytes + maximumTokens * (HMSMessageService.maximumTokenLength + 8) + 4096
    static let maximumLifetimeSeconds: Int64 = 3600
    static let skewSeconds: Int64 = 60
    static let categories: Set<String> = [
        "IM", "VOIP", "MISS_CALL", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS", "FINANCE",
        "DEVICE_REMINDER", "MAIL", "MARKETING", "PLAY_VOICE",
    ]

    private struct State {
        var accounts: [String: SimulatorHarmonyOSAccount] = [:]
        var invalid: Set<String> = []
        var seen: Set<String> = []
        var refused: Set<String> = []
        var received: [ReceivedHarmonyOSMessage] = []
        var accepted = 0
    }

    private let state = Mutex(State())
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    private let limit: Int

    init(recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64, receivedLimit: Int, invalid: Set<String> = []) {
        self.recorder = recorder
        self.clock = clock
        self.limit = max(1, receivedLimit)
        state.withLock { $0.invalid = invalid }
    }

    static func handles(path: String?) -> Bool { path?.hasPrefix("/v3/") ?? false }

    func trust(_ account: SimulatorHarmonyOSAccount) { state.withLock { $0.accounts[account.subAccount] = account } }
    func invalidate(_ token: String) { state.withLock { _ = $0.invalid.insert(token) } }
    /// Every JWT accepted so far answers 80200003 from now on (as when Huawei expires a token early).
    func expireAll() { state.withLock { $0.refused.formUnion($0.seen) } }
    var received: [ReceivedHarmonyOSMessage] { state.withLock { $0.received } }
    var accepted: Int { state.withLock { $0.accepted } }

    /// Verifies the JWT for `projectId`: nil when valid, else the refusal's code and message.
    func verify(jwt: String, projectId: String) -> (code: String, message: String)? {
        let fail = ("80200001", "Authentication failed")
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = StrictBase64URL.decode(parts[0]), let c = StrictBase64URL.decode(parts[1]),
            let signature = StrictBase64URL.decode(parts[2]), let header = try? JSONValue(parsing: h),
            let claims = try? JSONValue(parsing: c)
        else { return (fail.0, "Authentication failed: the bearer is not a JWT") }
        guard header["alg"]?.stringValue == "PS256" else { return (fail.0, "Authentication failed: alg must be PS256") }
        let (account, refused) = state.withLock { s in (claims["iss"]?.stringValue.flatMap { s.accounts[$0] }, s.refused.contains(jwt)) }
        guard let account else { return (fail.0, "Authentication failed: iss is not a service account of this simulator") }
        guard header["kid"]?.stringValue == account.keyId else { return (fail.0, "Authentication failed: kid is not the account's key_id") }
        let input = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard account.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .PSS)
        else { return (fail.0, "Authentication failed: bad signature") }
        guard claims["aud"]?.stringValue == Self.audience else { return (fail.0, "Authentication failed: aud must be \(Self.audience)") }
        guard account.projectId == projectId else { return (fail.0, "Authentication failed: the service account is not of project \(projectId)") }
        let now = clock() / 1000
        guard let iat = claims["iat"]?.intValue, let exp = claims["exp"]?.intValue, exp > iat,
            exp - iat <= Self.maximumLifetimeSeconds, iat <= now + Self.skewSeconds
        else { return (fail.0, "Authentication failed: iat and exp must be a lifetime of at most 3600 s") }
        if exp <= now - Self.skewSeconds || refused { return ("80200003", "JWT expired") }
        state.withLock { _ = $0.seen.insert(jwt) }
        return nil
    }

    func respond(
        method: String?, path: String?, authorization: String?, pushType: String?, contentType: String?, body: [UInt8],
        bodyBytes: Int
    ) -> Response {
        let requestId = HMSMessageService.requestId(nowMs: clock())
        let path = path ?? ""
        let (prefix, suffix) = ("/v3/", "/messages:send")
        guard method == "POST", path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count,
            case let projectId = String(path.dropFirst(prefix.count).dropLast(suffix.count)), !projectId.contains("/")
        else {
            return answer(404, nil, "Service not found. Check the request URL (POST /v3/{projectId}/messages:send)", requestId)
        }
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            return answer(401, "80200001", "Authentication failed: no Bearer JWT", requestId)
        }
        if let refusal = verify(jwt: String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces), projectId: projectId) {
            return answer(401, refusal.code, refusal.message, requestId)
        }
        guard let pushType, let type = Int(pushType) else {
            return answer(400, "80100001", "push-type header is required (0 alert, 6 background, …)", requestId)
        }
        guard type == 0 || type == 6 else {
            return answer(400, "80100001", "push-type \(type) is not played by the simulator (only 0 and 6)", requestId)
        }
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            return answer(400, "80100003", "Illegal payload, the Content-Type must be application/json", requestId)
        }
        guard bodyBytes <= Self.maximumBodyBytes, bodyBytes == body.count, let root = try? JSONValue(parsing: body),
            let pairs = root.objectPairs
        else {
            return answer(bodyBytes > Self.maximumBodyBytes ? 400 : 400, bodyBytes > Self.maximumBodyBytes ? "80300008" : "80100003",
                          "Illegal payload, the body must be a JSON object of at most 4096 bytes without its tokens", requestId)
        }
        let message = JSONValue.object(pairs.filter { $0.0 != "target" })
        guard message.encoded.count <= Self.maximumMessageBytes else {
            return answer(400, "80300008", "The message body size exceeds 4096 bytes", requestId)
        }
        guard let tokenValues = root["target"]?["token"]?.arrayValue, (1...Self.maximumTokens).contains(tokenValues.count) else {
            return answer(400, "80300010", "target.token must hold 1-1000 tokens", requestId)
        }
        let tokens = tokenValues.compactMap(\.stringValue)
        guard tokens.count == tokenValues.count else { return answer(400, "80300010", "target.token must be strings", requestId) }
        guard let payload = root["payload"], payload.objectPairs != nil else {
            return answer(400, "80100003", "Illegal payload, payload is required", requestId)
        }
        if let refusal = Self.check(payload: payload, pushType: type) { return answer(400, "80100003", "Illegal payload, \(refusal)", requestId) }
        if let ttl = root["pushOptions"]?["ttl"] {
            guard let seconds = ttl.intValue, (0...1_296_000).contains(seconds) else {
                return answer(400, "80100003", "Illegal payload, pushOptions.ttl must be 0-1296000", requestId)
            }
        }

        let now = clock()
        let invalid = state.withLock { $0.invalid }
        var accepted: [ReceivedHarmonyOSMessage] = []
        var malformed: [String] = [], noRight: [String] = []
        for token in tokens {
            if !HMSMessageService.isWellFormed(token: token) {
                malformed.append(token)
            } else if invalid.contains(token) {
                noRight.append(token)
            } else {
                accepted.append(.init(projectId: projectId, token: token, pushType: type, message: message, requestId: requestId, receivedAtMs: now))
            }
        }
        var groups: [(String, JSONValue)] = []
        if !malformed.isEmpty { groups.append(("tokenFormatError", .array(malformed.map(JSONValue.string)))) }
        if !noRight.isEmpty { groups.append(("noRight", .array(noRight.map(JSONValue.string)))) }
        let failure = Int64(malformed.count + noRight.count)
        guard !accepted.isEmpty else {
            let detail = JSONValue.object([("illegalTokens", .object(groups)), ("failure", .int(failure))])
            return answer(400, "80300007", detail.encodedString, requestId)
        }
        state.withLock { s in
            s.accepted += accepted.count
            s.received.append(contentsOf: accepted)
            if s.received.count > limit { s.received.removeFirst(s.received.count - limit) }
        }
        recorder.answered(harmonyos: accepted)
        guard failure > 0 else { return response(200, "80000000", "Success", requestId) }
        let detail = JSONValue.object([
            ("illegalTokens", .object(groups)), ("success", .int(Int64(accepted.count))), ("failure", .int(failure)),
        ])
        return response(200, "80100000", detail.encodedString, requestId)
    }

    /// What is wrong with `payload` for `pushType`, or nil.
    static func check(payload: JSONValue, pushType: Int) -> String? {
        if pushType == 6 {
            guard payload["extraData"]?.stringValue != nil else { return "a background message needs payload.extraData (a string)" }
            return nil
        }
        guard let notification = payload["notification"], notification.objectPairs != nil else {
            return "an alert message needs payload.notification"
        }
        guard let category = notification["category"]?.stringValue else {
            return "notification.category is required (without it the message counts as MARKETING)"
        }
        guard categories.contains(category), category != "PLAY_VOICE" else { return "notification.category '\(category)' is not valid for push-type 0" }
        guard let title = notification["title"]?.stringValue, !title.isEmpty else { return "notification.title is required" }
        guard let body = notification["body"]?.stringValue, !body.isEmpty else { return "notification.body is required" }
        guard let action = notification["clickAction"]?["actionType"]?.intValue, action == 0 || action == 1 else {
            return "notification.clickAction.actionType must be 0 or 1"
        }
        if let badge = notification["badge"], let set = badge["setNum"], !(0...99).contains(set.intValue ?? -1) {
            return "badge setNum value ranges from 0 to 99"
        }
        return nil
    }

    private func answer(_ status: Int, _ code: String?, _ message: String, _ requestId: String) -> Response {
        recorder.answered(status: status, reasonText: code.map { "harmonyos-\($0)" } ?? "harmonyos-http-\(status)")
        return response(status, code, message, requestId)
    }

    private func response(_ status: Int, _ code: String?, _ message: String, _ requestId: String) -> Response {
        var fields: [(String, JSONValue)] = []
        if let code { fields.append(("code", .string(code))) }
        fields.append(("msg", .string(message)))
        fields.append(("requestId", .string(requestId)))
        let json = Array(JSONValue.object(fields).encodedString.utf8)
        return Response(
            status: status, headers: [("content-type", "application/json;charset=UTF-8"), ("content-length", String(json.count))],
            body: json)
    }
}
