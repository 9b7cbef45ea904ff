import Foundation
import PushCore

extension HMSSender {
    /// Applies ``HMSAnswerRule`` to one attempt's answer, on the transport thread that carried it (the shared part —
    /// counting it, transport errors — is ``BearerTokenSender``'s).
    func handle(_ job: TransferJob, _ response: TransferResponse) {
        let answer = HMSAnswer(
            status: response.status, body: response.body, retryAfterMs: response.retryAfter?.delayMs(nowMs: clock.nowMs()))
        // An expired or refused access token (80200003 "Oauth Token expired", 80200001, a bare 401): renewed and the
        // notification resent, once (``BearerTokenSender/renewedAfterRefusal(_:)``).
        let refusedToken = answer.code == HMSAnswerRule.Code.oauthExpired || answer.code == HMSAnswerRule.Code.oauthFailed
            || (answer.status == 401 && answer.code == nil)
        if refusedToken, link.renewedAfterRefusal(job) { return }
        let reason = Self.reason(answer)
        let kind = HMSAnswerRule.verdict(for: answer, token: job.item.registrationToken).kind
        // Every invalid-token answer is suspect — what every token answers when the credentials are another app's —
        // so the breaker holds, releases or keeps it. Push Kit has no per-device "uninstalled" answer of its own. The
        // prune log and its counters name Push Kit's code (80300007, or 80100000 for a partial success's token).
        let prune = link.breakerDecision(
            job, tokenDead: kind == .tokenDead, suspect: kind == .tokenDead,
            request: PruneRequest(service: answer.code ?? HMSAnswerRule.Code.invalidTokens, status: answer.status),
            tripped: "pruning breaker tripped: too many invalid-token answers from Push Kit; those tokens are kept, not deleted. Check that the app's client ID and secret belong to the AppGallery Connect app its devices register with.")
        let message = answer.message.map { String($0.prefix(200)) }
        link.conclude(
            job, kind, status: response.status, reason: reason, prune: prune, message: message, retryAfterMs: answer.retryAfterMs,
            refusal: "Push Kit refused client \(credentials.clientId)'s sends (HTTP \(answer.status) \(reason)): \(message ?? "no message")")
    }

    /// The reason a result carries: Push Kit's code (80300007, 80100003, …), `TrafficControl` for a bare 503 (flow
    /// control), else the HTTP status.
    static func reason(_ answer: HMSAnswer) -> String {
        answer.code ?? (answer.status == 503 ? HMSAnswerRule.Code.trafficControl : "HTTP \(answer.status)")
    }
}
