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
}
