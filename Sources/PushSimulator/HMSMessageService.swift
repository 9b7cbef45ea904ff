import Foundation
import PushCore
import Synchronization

/// The simulator's Huawei Push Kit send endpoint, `POST /v1/{clientId}/messages:send` (Huawei's host:
/// `https://push-api.cloud.huawei.com`), the same on HTTP/2 and HTTP/1.1, as strict as Huawei or stricter (Huawei,
/// "Sending Downlink Messages",
/// developer.huawei.com/consumer/en/doc/HMSCore-References/https-send-api-0000001050986197, and Push Kit's result
/// codes). Every answer is JSON `{"code","msg","requestId"}` (requestId a random digit string),
/// decided in this order:
///
/// 1. The method and path: anything but a POST to `/v1/{clientId}/messages:send` is HTTP 404, which Huawei documents
///    as "Service not found. Check the request URL." with no service code: the body is `{"msg","requestId"}`.
/// 2. `Authorization: Bearer <token>` missing, unknown, or granted to another client id: 401 `80200001` "Oauth
///    authentication error"; a token of this client id past its expiry (or expired early by
///    ``HMSTokenService/expireAll()``): 401 `80200003` "Oauth Token expired.".
/// 3. The flow-control fault (``SimulatorFaults/hmsFlowControlFraction``): HTTP 503, Huawei's "Traffic control",
///    which has no service code either: `{"msg","requestId"}`.
/// 4. `Content-Type` not `application/json`: 400 `80100003`.
/// 5. The body (``HMSMessageRules``): 400 `80100003` "Illegal payload, …", `80300010` (the token array), `80300008`
///    (the message over 4096 bytes without its tokens; a body over ``maximumBodyBytes`` is refused so unread).
/// 6. Each token: well-formed (the simulator's rule, ``isWellFormed(token:)``) and not invalidated
///    (``SimulatorConfiguration/hmsInvalidTokens``, ``invalidate(_:)``). All bad: 400 `80300007` "All the tokens are
///    invalid"; some bad: 200 `80100000` with `msg` the JSON text `{"success":N,"failure":M,"illegal_tokens":[…]}`
///    (Huawei's partial-success form); all good: 200 `80000000` "Success".
///
/// Accepted messages (not `validate_only`) are recorded one per token delivered (``ReceivedHMSMessage``).
final class HMSMessageService: Sendable {
    typealias Response = WebPushService.Response

    /// The largest body read: 1000 tokens of the longest form and a full message, with room for the JSON around them.
    static let maximumBodyBytes =
        HMSMessageRules.maximumMessageBytes
        + HMSMessageRules.maximumTokens * (maximumTokenLength + 8) + 4096
    /// HMS push tokens: at least this long (today's are 130 characters)…
    static let minimumTokenLength = 32
    /// …and at most this long (the simulator's own bound; Huawei documents none).
    static let maximumTokenLength = 1024

    /// Push Kit's service codes.
    enum Code {
        static let success = "80000000"
        static let partialSuccess = "80100000"
        static let illegalPayload = HMSMessageRules.Code.illegalPayload
        static let authenticationError = "80200001"
        static let tokenExpired = "80200003"
        static let allTokensInvalid = "80300007"
    }

    private struct State {
        var invalid: Set<String> = []
        var received: [ReceivedHMSMessage] = []
        var accepted = 0
    }

    private let state = Mutex(State())
    private let oauth: HMSTokenService
    private let recorder: SimulatorRecorder
    private let clock: @Sendable () -> Int64
    private let limit: Int

    init(
        oauth: HMSTokenService, recorder: SimulatorRecorder, clock: @escaping @Sendable () -> Int64, receivedLimit: Int,
        invalid: Set<String> = []
    ) {
        self.oauth = oauth
        self.recorder = recorder
        self.clock = clock
        self.limit = max(1, receivedLimit)
        state.withLock { $0.invalid = invalid }
    }

    /// True for the paths this service answers: every `/v1/…` path but FCM's `/v1/projects/…`.
    static func handles(path: String?) -> Bool {
        guard let path, path.hasPrefix("/v1/") else { return false }
        return !FCMMessageService.handles(path: path)
    }

    /// Marks a token invalid (the app was uninstalled, or the token belongs to another app): sends to it fail.
    func invalidate(_ token: String) { state.withLock { _ = $0.invalid.insert(token) } }

    var received: [ReceivedHMSMessage] { state.withLock { $0.received } }
    var accepted: Int { state.withLock { $0.accepted } }

    /// A push token in HMS's form, random: `IQAAAACy` and 122 characters of base64url, 130 in all (as Huawei's tokens
    /// look, e.g. `IQAAAACy1DKnAADSOqxBZYk_OORFIk1zxXtorU6pQ4mi…`).
    static func mintToken() -> String {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<92).map { _ in UInt8.random(in: 0...255, using: &random) }
        return "IQAAAACy" + String(StrictBase64URL.encode(bytes).prefix(122))
    }

    /// The simulator's rule for a token: 32…1024 bytes of `A–Z a–z 0–9 - _ . : + / =`.
    static func isWellFormed(token: String) -> Bool {
        (minimumTokenLength...maximumTokenLength).contains(token.utf8.count)
            && token.utf8.allSatisfy { byte in
                StrictBase64URL.isAlphabet(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
            }
    }

    /// Answers one complete request.
    func respond(
        method: String?, path: String?, authorization: String?, contentType: String?, body: [UInt8], bodyBytes: Int,
        faults: SimulatorFaults, chance: (Double) -> Bool
    ) -> Response {
        let requestId = Self.requestId(nowMs: clock())
        let path = path ?? ""
        let prefix = "/v1/"
        let suffix = "/messages:send"
        guard method == "POST", path.hasPrefix(prefix), path.hasSuffix(suffix),
            path.count > prefix.count + suffix.count,
            case let clientId = String(path.dropFirst(prefix.count).dropLast(suffix.count)), !clientId.contains("/")
        else {
            return answer(
                404, code: nil,
                "Service not found. Check the request URL: \(method ?? "") \(path) "
                    + "(Push Kit takes POST /v1/{clientId}/messages:send)",
                requestId)
        }

        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            return answer(401, code: Code.authenticationError, "Oauth authentication error", requestId)
        }
        let token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        switch oauth.state(of: token) {
        case .valid(let owner) where owner == clientId: break
        case .expired(let owner) where owner == clientId:
            return answer(401, code: Code.tokenExpired, "Oauth Token expired.", requestId)
        default:
            return answer(401, code: Code.authenticationError, "Oauth authentication error", requestId)
        }
        if chance(faults.hmsFlowControlFraction) {
            return answer(503, code: nil, "Traffic control (simulated): distribute the sending speed evenly", requestId)
        }
        let mediaType = contentType?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard mediaType == "application/json" else {
            return answer(
                400, code: Code.illegalPayload,
                "Illegal payload, the Content-Type must be application/json, not \(contentType ?? "none")", requestId)
        }
        guard bodyBytes <= Self.maximumBodyBytes, bodyBytes == body.count else {
            return answer(
                400, code: HMSMessageRules.Code.bodySize,
                "The message body size exceeds the default value (\(bodyBytes) bytes)", requestId)
        }
        let valid: HMSMessageRules.Valid
        switch HMSMessageRules.validate(body: body) {
        case .failure(let refusal): return answer(400, code: refusal.code, refusal.message, requestId)
        case .success(let v): valid = v
        }

        let now = clock()
        var accepted: [ReceivedHMSMessage] = []
        var illegal: [String] = []
        switch valid.target {
        case .tokens(let tokens):
            let invalid = state.withLock { $0.invalid }
            for device in tokens {
                if Self.isWellFormed(token: device), !invalid.contains(device) {
                    accepted.append(
                        .init(
                            clientId: clientId, token: device, message: valid.message, requestId: requestId,
                            receivedAtMs: now))
                } else {
                    illegal.append(device)
                }
            }
            guard !accepted.isEmpty else {
                return answer(400, code: Code.allTokensInvalid, "All the tokens are invalid", requestId)
            }
        case .topic(let topic):
            accepted.append(
                .init(
                    clientId: clientId, token: nil, topic: topic, message: valid.message, requestId: requestId,
                    receivedAtMs: now))
        case .condition(let condition):
            accepted.append(
                .init(
                    clientId: clientId, token: nil, condition: condition, message: valid.message, requestId: requestId,
                    receivedAtMs: now))
        }
        if valid.validateOnly {
            recorder.answered(status: 200, reasonText: nil)
        } else {
            state.withLock { state in
                state.accepted += accepted.count
                state.received.append(contentsOf: accepted)
                if state.received.count > limit { state.received.removeFirst(state.received.count - limit) }
            }
            recorder.answered(hms: accepted)
        }
        guard !illegal.isEmpty else { return response(200, code: Code.success, "Success", requestId) }
        // Huawei's partial success: the counts and the refused tokens as a JSON text inside `msg`.
        let detail = JSONValue.object([
            ("success", .int(Int64(accepted.count))), ("failure", .int(Int64(illegal.count))),
            ("illegal_tokens", .array(illegal.map(JSONValue.string))),
        ])
        return response(200, code: Code.partialSuccess, detail.encodedString, requestId)
    }

    /// A request id in Huawei's look (`157*******006`: digits, a millisecond time first): the time and six random
    /// digits.
    static func requestId(nowMs: Int64) -> String {
        var random = SystemRandomNumberGenerator()
        return String(nowMs) + String(format: "%06d", Int.random(in: 0..<1_000_000, using: &random))
    }

    /// A refusal (or an HTTP-level answer without a service code), counted by the recorder under its code.
    private func answer(_ status: Int, code: String?, _ message: String, _ requestId: String) -> Response {
        recorder.answered(status: status, reasonText: code.map { "hms-\($0)" } ?? "hms-http-\(status)")
        return response(status, code: code, message, requestId)
    }

    private func response(_ status: Int, code: String?, _ message: String, _ requestId: String) -> Response {
        var fields: [(String, JSONValue)] = []
        if let code { fields.append(("code", .string(code))) }
        fields.append(("msg", .string(message)))
        fields.append(("requestId", .string(requestId)))
        let json = Array(JSONValue.object(fields).encodedString.utf8)
        return Response(
            status: status,
            headers: [
                ("content-type", "application/json;charset=UTF-8"), ("content-length", String(json.count)),
            ], body: json)
    }
}
