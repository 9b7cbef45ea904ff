import PushCore

extension DeliveryOutcome {
    /// The delivery-log row of this outcome for `app` (of broadcast `broadcastId`, if any), or nil for a pending
    /// marker (nothing was answered).
    func logRecord(app: String, broadcastId: String?) -> DeliveryRecord? {
        guard kind != .pending else { return nil }
        return DeliveryRecord(
            app: app, notificationId: notificationId, uniqueId: uniqueId, token: token, status: status, reason: reason, attempts: attempts,
            possiblyDuplicated: possiblyDuplicated, firstAttemptMs: startedMs, finishedMs: finishedMs, kind: kind, broadcastId: broadcastId,
            service: service)
    }
}
