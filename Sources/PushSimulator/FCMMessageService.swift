import Foundation
import PushCore
import Synchronization

/// The simulator's FCM HTTP v1 endpoint, `POST /v1/projects/{project_id}/messages:send`, the same on HTTP/2 and
/// HTTP/1.1. In order, as FCM reports them: the path and method (404 `NOT_FOUND`); `Authorization: Bearer <token>`
/// with an unexpired access token of ``OAuthTokenService`` (401 `UNAUTHENTICATED`) granted to an account of this
/// project (403 `PERMISSION_DENIED`); the 429 `QUOTA_EXCEEDED` / 503 `UNAVAILABLE` faults (with `Retry-After`); the
/// body (``FCMMessageRules``, 400 `INVALID_ARGUMENT` with a BadRequest detail naming the field); then the
/// registration token: one outside FCM's alphabet or length is 400 `INVALID_ARGUMENT` ("The registration token is not
/// a valid FCM registration token", field `message.token`), one registered to another Firebase project 403
/// `PERMISSION_DENIED` with `SENDER_ID_MISMATCH` ("The authenticated sender ID is different from the sender ID for the
/// registration token"), an unregistered one 404 `UNREGISTERED`. Accepted: 200
/// `{"name": "projects/{project_id}/messages/{id}"}`, recorded (``PushSimulator/receivedFCMMessages``) unless
/// `validate_only`. Errors are Google's error object with FCM's `FcmError` detail
/// (https://firebase.google.com/docs/cloud-messaging/error-codes).
final class FCMMessageService: Sendable {
    typealias Response = WebPushService.Response

    /// A request body beyond this is refused unread (the message limit is 4 KB; the envelope adds little).
    static let maximumBodyBytes = 16 * 1024
    /// The Retry-After of the 429 and 503 faults, in seconds.
    static let retryAfterSeconds = 1
    /// FCM registration tokens: at least this long (today's are ~150–200 characters)…
    static let minimumTokenLength = 32
    /// …and at most this long.
    static let maximumTokenLength = 4096

    private struct State {
        var unregistered: Set<String> = []
        /// Tokens an app registered with another project's sender ID.
        var foreign: Set<String> = []
        var received: [ReceivedFCMMessage] = []
        var accepted = 0
    }

    private let state = Mutex(State())
    private let oauth: OAuthTokenService
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    private let limit: Int

    init(
        oauth: OAuthTokenService, recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64, receivedLimit: Int,
        unregistered: Set<String> = [], foreign: Set<String> = []
    ) {
        self.oauth = oauth
        self.recorder = recorder
        self.clock = clock
        self.limit = max(1, receivedLimit)
        state.withLock {
            $0.unregistered = unregistered
            $0.foreign = foreign
        }
    }

    /// True for the paths this service answers: `/v1/projects/…` (the rest of `/v1/` is Huawei's,
    /// ``HMSMessageService``).
    static func handles(path: String?) -> Bool { path?.hasPrefix("/v1/projects/") ?? false }

    /// Marks a registration token unregistered (the app was uninstalled): sends to it answer 404 UNREGISTERED.
    func unregister(_ token: String) { state.withLock { _ = $0.unregistered.insert(token) } }

    var received: [ReceivedFCMMessage] { state.withLock { $0.received } }
    var accepted: Int { state.withLock { $0.accepted } }

    /// A registration token in FCM's form (`<22 characters>:APA91b<134 characters>`), random.
    static func mintToken() -> String {
        var random = SystemRandomNumberGenerator()
        func chunk(_ bytes: Int) -> String {
            StrictBase64URL.encode((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        return String(chunk(16).prefix(22)) + ":APA91b" + String(chunk(101).prefix(134))
    }

    /// True for FCM's token alphabet (`A–Z a–z 0–9 - _ :`) and length.
    static func isWellFormed(token: String) -> Bool {
        (minimumTokenLength...maximumTokenLength).contains(token.utf8.count)
            && token.utf8.allSatisfy { StrictBase64URL.isAlphabet($0) || $0 == UInt8(ascii: ":") }
    }

    /// Answers one complete request.
    func respond(
        method: String?, path: String?, authorization: String?, body: [UInt8], bodyBytes: Int, faults: SimulatorFaults,
        chance: (Double) -> Bool
    ) -> Response {
        let path = path ?? ""
        let prefix = "/v1/projects/", suffix = "/messages:send"
        guard method == "POST", path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return error(404, "NOT_FOUND", "Requested entity was not found: \(method ?? "") \(path) (FCM takes POST /v1/projects/{project_id}/messages:send)")
        }
        let projectId = String(path.dropFirst(prefix.count).dropLast(suffix.count))
        guard !projectId.contains("/") else { return error(404, "NOT_FOUND", "Requested entity was not found.") }

        let credentials = "Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            return error(401, "UNAUTHENTICATED", "Request is missing required authentication credential. " + credentials)
        }
        let token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard let granted = oauth.grant(of: token) else {
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. " + credentials)
        }
        if let owner = granted, owner != projectId {
            return error(403, "PERMISSION_DENIED",
                         "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(projectId)' (or it may not exist).")
        }
        if chance(faults.tooManyRequestsFraction) {
            return error(429, "RESOURCE_EXHAUSTED", "Quota exceeded (simulated).", code: "QUOTA_EXCEEDED", retryAfter: true)
        }
        if chance(faults.serviceUnavailableFraction) {
            return error(503, "UNAVAILABLE", "The service is currently unavailable (simulated).", code: "UNAVAILABLE", retryAfter: true)
        }
        guard bodyBytes <= Self.maximumBodyBytes, bodyBytes == body.count else {
            return error(400, "INVALID_ARGUMENT", "Message is too big: the request body is \(bodyBytes) bytes", code: "INVALID_ARGUMENT", fields: ["message"])
        }
        let valid: FCMMessageRules.Valid
        switch FCMMessageRules.validate(body: body) {
        case .failure(let refusal):
            return error(400, "INVALID_ARGUMENT", refusal.message, code: "INVALID_ARGUMENT", fields: refusal.fields)
        case .success(let v): valid = v
        }
        var device: String?
        if case .token(let registration) = valid.target {
            guard Self.isWellFormed(token: registration) else {
                return error(400, "INVALID_ARGUMENT", FCMAnswerRule.invalidTokenMessage, code: "INVALID_ARGUMENT", fields: [FCMAnswerRule.tokenField])
            }
            if state.withLock({ $0.foreign.contains(registration) }) {
                return error(403, "PERMISSION_DENIED", "SenderId mismatch", code: FCMAnswerRule.ErrorCode.senderIdMismatch)
            }
            if state.withLock({ $0.unregistered.contains(registration) }) {
                return error(404, "NOT_FOUND", "Requested entity was not found.", code: "UNREGISTERED")
            }
            device = registration
        }
        var random = SystemRandomNumberGenerator()
        let messageId = valid.validateOnly ? "fake_message_id" : "0:\(clock())%\(String(UInt64.random(in: 0...UInt64.max, using: &random), radix: 16))"
        if !valid.validateOnly {
            var topic: String?, condition: String?
            if case .topic(let t) = valid.target { topic = t }
            if case .condition(let c) = valid.target { condition = c }
            let message = ReceivedFCMMessage(
                projectId: projectId, token: device, topic: topic, condition: condition, message: valid.message,
                messageId: messageId, receivedAtMs: clock())
            state.withLock { state in
                state.accepted += 1
                state.received.append(message)
                if state.received.count > limit { state.received.removeFirst(state.received.count - limit) }
            }
            recorder.answered(fcm: message)
        } else {
            recorder.answered(status: 200, reasonText: nil)
        }
        let json = Array(JSONValue.object([("name", .string("projects/\(projectId)/messages/\(messageId)"))]).encodedString.utf8)
        return Response(status: 200, headers: [("content-type", "application/json; charset=UTF-8"), ("content-length", String(json.count))], body: json)
    }

    /// Google's error object, with FCM's `FcmError` detail when `code` is given and a BadRequest detail naming `fields`.
    private func error(
        _ status: Int, _ canonical: String, _ message: String, code: String? = nil, fields: [String] = [], retryAfter: Bool = false
    ) -> Response {
        recorder.answered(status: status, reasonText: code ?? canonical)
        var details: [JSONValue] = []
        if let code { details.append(.object([("@type", .string(FCMError.fcmErrorType)), ("errorCode", .string(code))])) }
        if !fields.isEmpty {
            details.append(.object([
                ("@type", .string(FCMError.badRequestType)),
                ("fieldViolations", .array(fields.map { .object([("field", .string($0)), ("description", .string(message))]) })),
            ]))
        }
        var error: [(String, JSONValue)] = [("code", .int(Int64(status))), ("message", .string(message)), ("status", .string(canonical))]
        if !details.isEmpty { error.append(("details", .array(details))) }
        let json = Array(JSONValue.object([("error", .object(error))]).encodedString.utf8)
        var headers = [("content-type", "application/json; charset=UTF-8"), ("content-length", String(json.count))]
        if retryAfter { headers.append(("retry-after", String(Self.retryAfterSeconds))) }
        if status == 401 { headers.append(("www-authenticate", "Bearer realm=\"https://accounts.google.com/\"")) }
        return Response(status: status, headers: headers, body: json)
    }
}
