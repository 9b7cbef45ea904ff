import PushCore
import Testing

/// Every row of FCMAnswerRule's table, from response bodies shaped as Firebase documents them.
@Suite struct FCMAnswerRuleTests {
    typealias Rule = FCMAnswerRule

    /// `{"error": {...}}` with an `FcmError` detail (when `code` is given) and a `BadRequest` detail (when `fields`).
    static func body(_ status: Int, _ canonical: String, code: String?, fields: [String] = [], message: String = "m") -> [UInt8] {
        var details: [String] = []
        if let code { details.append(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}"#) }
        if !fields.isEmpty {
            let violations = fields.map { #"{"field":"\#($0)","description":"bad"}"# }.joined(separator: ",")
            details.append(#"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[\#(violations)]}"#)
        }
        return Array(#"{"error":{"code":\#(status),"message":"\#(message)","status":"\#(canonical)","details":[\#(details.joined(separator: ","))]}}"#.utf8)
    }

    @Test func theErrorBodyParserReadsStatusMessageErrorCodeAndFieldViolations() {
        let error = FCMError(body: Self.body(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT", fields: ["message.token", "message.data[0].value"], message: "Request contains an invalid argument."))
        #expect(error == FCMError(status: "INVALID_ARGUMENT", message: "Request contains an invalid argument.",
                                  errorCode: "INVALID_ARGUMENT", fieldViolations: ["message.token", "message.data[0].value"]))
        // Details of other types (QuotaFailure, ErrorInfo) are skipped; a body that is not FCM's is empty.
        let quota = #"{"error":{"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"QUOTA_EXCEEDED"}]}}"#
        #expect(FCMError(body: Array(quota.utf8)) == FCMError(status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"))
        #expect(FCMError(body: Array("<!DOCTYPE html><title>Error 502</title>".utf8)) == FCMError())
        #expect(FCMError(body: Array(#"{"error":"nope"}"#.utf8)) == FCMError())
        #expect(FCMError(body: [UInt8]()) == FCMError())
    }

    @Test func twoHundredIsAccepted() {
        #expect(Rule.verdict(status: 200, body: Array(#"{"name":"projects/p/messages/1"}"#.utf8)) == AnswerVerdict(.accepted))
    }

    @Test func unregisteredAndSenderIdMismatchPruneTheToken() {
        #expect(Rule.verdict(status: 404, body: Self.body(404, "NOT_FOUND", code: "UNREGISTERED")) == AnswerVerdict(.tokenDead))
        #expect(Rule.verdict(status: 403, body: Self.body(403, "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH")) == AnswerVerdict(.tokenDead))
        // Never gated on a timestamp: FCM gives none.
        #expect(!Rule.verdict(status: 404, body: Self.body(404, "NOT_FOUND", code: "UNREGISTERED")).gatedOnTimestamp)
    }

    @Test func invalidArgumentPrunesOnlyWhenTheDetailsNameTheToken() {
        let tokenField = Self.body(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT", fields: ["message.token"])
        #expect(Rule.verdict(status: 400, body: tokenField) == AnswerVerdict(.tokenDead))
        // Firebase's error-codes guide, Example 2: no field violation, its documented message.
        let example2 = Self.body(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT", message: Rule.invalidTokenMessage)
        #expect(Rule.verdict(status: 400, body: example2) == AnswerVerdict(.tokenDead))
        // The payload is wrong, not the token: a data value, the ttl, no field at all, a too-large message.
        for fields in [["message.data[0].value"], ["message.android.ttl"], ["message"], []] {
            let body = Self.body(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT", fields: fields)
            #expect(Rule.verdict(status: 400, body: body) == AnswerVerdict(.permanent), "fields \(fields)")
        }
        #expect(Rule.verdict(status: 400, body: Array(#"{"error":{"code":400,"status":"INVALID_ARGUMENT"}}"#.utf8)) == AnswerVerdict(.permanent))
        // A field merely starting like the token's is not the token.
        let near = Self.body(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT", fields: ["message.token_extra"])
        #expect(Rule.verdict(status: 400, body: near) == AnswerVerdict(.permanent))
    }

    @Test func quotaUnavailableAndInternalAreRetriedHonouringRetryAfter() {
        let rows: [(Int, String, String)] = [(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), (503, "UNAVAILABLE", "UNAVAILABLE"), (500, "INTERNAL", "INTERNAL")]
        for (status, canonical, code) in rows {
            let body = Self.body(status, canonical, code: code)
            #expect(Rule.verdict(status: status, body: body, retryAfterMs: 30_000) == AnswerVerdict(.retryable, retryAfterMs: 30_000), "\(code)")
            #expect(Rule.verdict(status: status, body: body) == AnswerVerdict(.retryable), "\(code)")
        }
    }

    @Test func thirdPartyAuthErrorIsACredentialFailure() {
        #expect(Rule.verdict(status: 401, body: Self.body(401, "UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR")) == AnswerVerdict(.credentialFailure))
    }

    /// Answers without an FCM code, or with a code this version does not know, are judged by their status; a 404
    /// without UNREGISTERED (a wrong project id) never prunes.
    @Test func unknownAnswersAreJudgedByStatusAndNeverPrune() {
        let unknown = Self.body(400, "FAILED_PRECONDITION", code: "SOME_NEW_CODE")
        #expect(Rule.verdict(status: 400, body: unknown) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 409, body: Self.body(409, "ABORTED", code: "SOME_NEW_CODE")) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 404, body: Self.body(404, "NOT_FOUND", code: nil)) == AnswerVerdict(.permanent))
        #expect(Rule.verdict(status: 503, body: Self.body(503, "UNAVAILABLE", code: "SOME_NEW_CODE"), retryAfterMs: 5) == AnswerVerdict(.retryable, retryAfterMs: 5))
        #expect(Rule.verdict(status: 502, body: Array("<html>Error 502 (Server Error)</html>".utf8)) == AnswerVerdict(.retryable))
        #expect(Rule.verdict(status: 429, body: [UInt8]()) == AnswerVerdict(.retryable))
        #expect(Rule.verdict(status: 401, body: Self.body(401, "UNAUTHENTICATED", code: nil)) == AnswerVerdict(.credentialFailure))
        #expect(Rule.verdict(status: 403, body: Self.body(403, "PERMISSION_DENIED", code: nil)) == AnswerVerdict(.credentialFailure))
        // An invalid-token message under another status is not a token signal.
        #expect(Rule.verdict(status: 403, body: Self.body(403, "PERMISSION_DENIED", code: nil, fields: ["message.token"])) == AnswerVerdict(.credentialFailure))
    }
}
