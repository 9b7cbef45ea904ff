import Foundation
import PushCore

extension FCMSender {
    /// Applies ``FCMAnswerRule`` to one attempt's answer, on the transport thread that carried it (the shared part —
    /// counting it, transport errors — is ``BearerTokenSender``'s).
    func handle(_ job: TransferJob, _ response: TransferResponse) {
        let answer = FCMAnswerRule.Answer(
            status: response.status, body: response.body, retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        // A refused access token (expired early, revoked): renewed and the notification resent, once
        // (``BearerTokenSender/renewedAfterRefusal(_:)``).
        if answer.status == 401, answer.error.errorCode == nil, link.renewedAfterRefusal(job) { return }
        let reason = Self.reason(answer)
        let kind = FCMAnswerRule.verdict(for: answer).kind
        // SENDER_ID_MISMATCH and an invalid token are suspect — what every token answers when the service account is
        // the wrong project's — so the breaker holds, releases or keeps them; UNREGISTERED is per-device evidence,
        // pruned at once. FCM gives no timestamp; the prune log and its counters name FCM's own error code.
        let code = answer.error.errorCode
            ?? (answer.status == 400 ? FCMAnswerRule.ErrorCode.invalidArgument : FCMAnswerRule.ErrorCode.unregistered)
        let prune = link.breakerDecision(
            job, tokenDead: kind == .tokenDead, suspect: kind == .tokenDead && answer.error.errorCode != FCMAnswerRule.ErrorCode.unregistered,
            request: PruneRequest(service: code, status: answer.status),
            tripped: "pruning breaker tripped: too many SENDER_ID_MISMATCH or invalid-token answers; those tokens are kept, not deleted. Check that the app's FCM service account belongs to the Firebase project its Android app registers with.")
        let message = answer.error.message.map { String($0.prefix(200)) }
        link.conclude(
            job, kind, status: response.status, reason: reason, prune: prune, message: message, retryAfterMs: answer.retryAfterMs,
            refusal: "FCM refused project \(account.projectId)'s sends (HTTP \(answer.status) \(reason)): \(message ?? "no message")")
    }

    /// The reason a result carries: FCM's own error code (UNREGISTERED, QUOTA_EXCEEDED, …), else the canonical status
    /// (INVALID_ARGUMENT, UNAUTHENTICATED, …), else the HTTP status.
    static func reason(_ answer: FCMAnswerRule.Answer) -> String {
        answer.error.errorCode ?? answer.error.status ?? "HTTP \(answer.status)"
    }
}
