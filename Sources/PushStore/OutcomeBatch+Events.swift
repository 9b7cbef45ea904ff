import PushCore

extension OutcomeBatch {
    /// The webhook events a committed batch makes (see ``recordEvents``): a token the store pruned (`pruned`,
    /// released BadDeviceToken prunes included) and a notification APNs refused for good.
    func webhookEvents(pruned: Set<DeviceToken>) -> [WebhookEvent] {
        guard recordEvents else { return [] }
        var events: [WebhookEvent] = []
        var covered = Set<DeviceToken>()
        for o in outcomes {
            switch o.kind {
            case .tokenDead where pruned.contains(o.token) && !covered.contains(o.token):
                covered.insert(o.token)
                events.append(WebhookEvent(
                    app: app, kind: .tokenPruned, token: o.token.hex, status: o.status, reason: o.reason, notificationId: o.notificationId,
                    broadcastId: job?.id, apnsTimestampMs: o.prune?.apnsTimestampMs, service: o.service))
            case .rejected:
                events.append(WebhookEvent(
                    app: app, kind: .deliveryFailed, token: o.token.hex, status: o.status, reason: o.reason, notificationId: o.notificationId,
                    broadcastId: job?.id, apnsTimestampMs: nil, service: o.service))
            default:
                break
            }
        }
        // BadDeviceToken prunes the breaker released later: their answer came in an earlier batch.
        for token in releasedPrunes where pruned.contains(token) && !covered.contains(token) {
            covered.insert(token)
            events.append(WebhookEvent(
                app: app, kind: .tokenPruned, token: token.hex, status: APNsReason.badDeviceToken.status, reason: APNsReason.badDeviceToken.rawValue,
                notificationId: nil, broadcastId: job?.id, apnsTimestampMs: nil))
        }
        return events
    }

    /// True when the batch holds an outcome that makes a webhook event whatever the store decides.
    var hasFailureEvents: Bool { recordEvents && outcomes.contains { $0.kind == .rejected } }
}
