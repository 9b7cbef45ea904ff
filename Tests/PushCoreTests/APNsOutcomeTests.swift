import PushCore
import Testing

@Suite struct APNsOutcomeTests {
    @Test func reasonsRoundTripWithUnknownFallback() {
        for reason in APNsReason.known { #expect(APNsReason(rawValue: reason.rawValue) == reason) }
        #expect(APNsReason(rawValue: "BrandNewReason") == .unknown("BrandNewReason"))
        #expect(APNsReason.unregistered.status == 410)
        #expect(APNsReason.payloadTooLarge.status == 413)
    }

    @Test func classificationFollowsApplesRules() {
        #expect(APNsOutcome.classify(status: 200, reason: nil) == .accepted)
        #expect(APNsOutcome.classify(status: 410, reason: .unregistered, timestampMs: 5) == .tokenDead(.unregistered, timestampMs: 5))
        #expect(APNsOutcome.classify(status: 400, reason: .badDeviceToken) == .tokenDead(.badDeviceToken, timestampMs: nil))
        #expect(APNsOutcome.classify(status: 400, reason: .badTopic) == .permanent(.badTopic))
        #expect(APNsOutcome.classify(status: 413, reason: .payloadTooLarge) == .permanent(.payloadTooLarge))
        #expect(APNsOutcome.classify(status: 429, reason: .tooManyRequests) == .retryable(.tooManyRequests))
        #expect(APNsOutcome.classify(status: 503, reason: .shutdown) == .retryable(.shutdown))
        #expect(APNsOutcome.classify(status: 502, reason: nil).isFinal == false)
        #expect(APNsOutcome.classify(status: 403, reason: .badCertificateEnvironment) == .credentialFailure(.badCertificateEnvironment))
        #expect(APNsOutcome.classify(status: 403, reason: .expiredProviderToken) == .retryable(.expiredProviderToken))
    }
}

@Suite struct APNsReasonChannelTests {
    @Test func channelReasonsAreKnownWithApplesStatus() {
        let channel: [(APNsReason, String)] = [
            (.missingChannelId, "MissingChannelId"), (.badChannelId, "BadChannelId"),
            (.channelNotRegistered, "ChannelNotRegistered"), (.cannotCreateChannelConfig, "CannotCreateChannelConfig"),
            (.featureNotEnabled, "FeatureNotEnabled"), (.badMessageStoragePolicy, "BadMessageStoragePolicy"),
        ]
        for (reason, name) in channel {
            #expect(reason.rawValue == name)
            #expect(APNsReason(rawValue: name) == reason)
            #expect(reason.status == 400, "\(name)")
            #expect(APNsReason.known.contains(reason))
            #expect(APNsReason.label(status: 400, reason: name) == name)
        }
        #expect(APNsReason.label(status: 400, reason: "InvalidPolicy") == APNsReason.unknownLabel)
    }

    @Test func labelsKeepTheOtherServicesReasonsAndBoundEverythingElse() {
        // A web device's 404 and an Android device's FCM codes are counted by name, not as `unknown`.
        #expect(APNsReason.label(status: 404, reason: "NotFound") == "NotFound")
        #expect(APNsReason.label(status: 429, reason: "QUOTA_EXCEEDED") == "QUOTA_EXCEEDED")
        #expect(APNsReason.label(status: 403, reason: "SENDER_ID_MISMATCH") == "SENDER_ID_MISMATCH")
        #expect(APNsReason.label(status: 400, reason: "The registration token is not a valid FCM registration token") == APNsReason.unknownLabel)
        #expect(APNsReason.label(status: 0, reason: "Connection refused") == APNsReason.transportErrorLabel)
        // The SQL form used by migrations names the same words.
        let sql = BroadcastCounts.reasonKeySQL(kind: "k", status: "s", reason: "r")
        #expect(sql.contains("'NotFound'") && sql.contains("'UNREGISTERED'") && sql.contains("'BadDeviceToken'"))
    }
}
