import PushCore

/// APNs' request rules: given one complete request, the answer APNs would give.
///
/// Pure (no I/O, no clock of its own) so every rule can be tested directly; the connection handler feeds it
/// the parsed headers, the body and who the client is.
struct RequestValidator: Sendable {
    /// The request headers APNs looks at, plus whether any of them appeared twice.
    struct Head: Sendable {
        var method: String?
        var path: String?
        var notificationId: String?
        var pushType: String?
        var priority: String?
        var expiration: String?
        var collapseId: String?
        var topic: String?
        var authorization: String?
        /// `apns-channel-id` (channel management and broadcasts).
        var channelId: String?
        /// `apns-request-id` (channel management and broadcasts).
        var requestId: String?
        /// `:authority`, and Web Push's `ttl`, `urgency`, `topic` and `content-encoding` (see ``WebPushService``).
        var authority: String?
        var ttl: String?
        var urgency: String?
        var webPushTopic: String?
        var contentEncoding: String?
        /// `content-type` (the OAuth token endpoint's form, see ``OAuthTokenService``).
        var contentType: String?
        /// Push Kit's `push-type` (HarmonyOS scenario API, ``HarmonyOSMessageService``).
        var huaweiPushType: String?
        var duplicate = false
        /// The header block breaks HTTP/2's rules (RFC 9113 §8.2–8.3): the stream gets RST_STREAM
        /// PROTOCOL_ERROR, as from any HTTP/2 server.
        var malformed = false
    }

    /// Who is sending, as established by the TLS handshake or the provider token.
    enum Client: Sendable {
        /// `--client-auth none`: anyone, any topic.
        case anonymous
        /// A verified client certificate.
        case certificate(ClientIdentity)
        /// A verified provider token, or the reason it failed.
        case token(Result<ProviderTokenVerifier.Verified, ReasonError>)
    }

    /// The answer.
    enum Verdict: Sendable {
        /// `endsActivity`: a liveactivity `end` event, after which the token's activity takes no more pushes.
        case accept(NotificationRequest, apnsIdGenerated: Bool, endsActivity: Bool = false)
        case reject(APNsReason, timestampMs: Int64?)
        /// A scripted answer (``DeviceBehaviour/answer(status:reason:timestampMs:)``): this status, not the reason's.
        case answer(status: Int, reason: APNsReason, timestampMs: Int64?)
    }

    /// The environment the simulator plays.
    var environment: APNsEnvironment

    /// Applies APNs' rules in the order APNs reports them: path and method, headers, credentials,
    /// topic, payload, then the device's own state. `activityEnded` gives the time a liveactivity `end` was
    /// accepted for a token (later liveactivity pushes to it are 410 Unregistered with that timestamp).
    func validate(
        head: Head, body: [UInt8], client: Client, device: (DeviceToken) -> DeviceBehaviour?,
        activityEnded: (DeviceToken) -> Int64? = { _ in nil }, nowMs: Int64, newID: () -> String
    ) -> Verdict {
        func reject(_ reason: APNsReason, _ ts: Int64? = nil) -> Verdict { .reject(reason, timestampMs: ts) }

        guard let path = head.path, path.hasPrefix("/3/device") else { return reject(.badPath) }
        guard head.method == "POST" else { return reject(.methodNotAllowed) }
        var tokenText = Substring(path.dropFirst("/3/device".count))
        if tokenText.isEmpty || tokenText == "/" { return reject(.missingDeviceToken) }
        guard tokenText.first == "/" else { return reject(.badPath) }
        tokenText = tokenText.dropFirst()
        guard tokenText.utf8.allSatisfy(Self.isHexDigit), let token = try? DeviceToken(parsing: String(tokenText))
        else { return reject(.badDeviceToken) }
        if head.duplicate { return reject(.duplicateHeaders) }

        // Credentials.
        let allowedTopics: [String]?
        switch credentialTopics(for: client) {
        case .failure(let reason): return reject(reason.reason)
        case .success(let topics): allowedTopics = topics
        }

        var apnsIdGenerated = false
        let notificationId: String
        if let given = head.notificationId {
            guard NotificationID.isValid(given) else { return reject(.badMessageId) }
            notificationId = given
        } else {
            notificationId = newID()
            apnsIdGenerated = true
        }
        var pushType = PushType.alert
        if let text = head.pushType {
            guard let parsed = PushType(rawValue: text) else { return reject(.invalidPushType) }
            pushType = parsed
        }
        var priority = PushPriority.immediate
        if let text = head.priority {
            guard let value = Int(text), let parsed = PushPriority(rawValue: value) else { return reject(.badPriority) }
            priority = parsed
        }
        var expiration: Int64? = nil
        if let text = head.expiration {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
                return reject(.badExpirationDate)
            }
            expiration = value
        }
        if let collapseId = head.collapseId, collapseId.utf8.count > 64 { return reject(.badCollapseId) }

        // Topic: certificates with one topic imply it; everyone else must name it.
        let topic: String
        if let given = head.topic {
            guard Self.isWellFormedTopic(given) else { return reject(.badTopic) }
            topic = given
        } else if case .certificate = client, let only = allowedTopics, only.count == 1 {
            topic = only[0]
        } else {
            return reject(.missingTopic)
        }
        if let allowed = allowedTopics, !allowed.contains(topic) { return reject(.topicDisallowed) }
        if !pushType.topicSuffix.isEmpty, !topic.hasSuffix(pushType.topicSuffix) { return reject(.invalidPushType) }

        // Payload.
        if body.isEmpty { return reject(.payloadEmpty) }
        if body.count > pushType.payloadLimit { return reject(.payloadTooLarge) }
        guard JSONSyntax.isObject(body) else { return reject(.unknown("BadPayload")) }
        if pushType == .background {
            if priority == .immediate { return reject(.badPriority) }
            // Only background pushes need the payload's content: parse it fully just for them.
            guard let payload = try? JSONValue(parsing: body), let aps = payload["aps"],
                aps["content-available"]?.intValue == 1,
                aps["alert"] == nil, aps["sound"] == nil, aps["badge"] == nil
            else { return reject(.invalidPushType) }
        }
        var endsActivity = false
        if pushType == .liveactivity {
            // Only Live Activity pushes need their payload's content: parsed just for them.
            switch ActivityPayloadRules.check(priority: priority, payload: body) {
            case .failure(let reason): return reject(reason.reason)
            case .success(let event): endsActivity = event == .end
            }
        }

        // The device's own state.
        switch device(token) {
        case nil: break
        case .bad?, .otherEnvironment?: return reject(.badDeviceToken)
        case .unregistered(let ts)?: return reject(.unregistered, ts ?? nowMs)
        case .tooManyRequests?: return reject(.tooManyRequests)
        case .internalServerError?: return reject(.internalServerError)
        case .answer(let status, let reason, let ts)?:
            let timestamp = ts ?? (status == APNsAnswerRule.goneStatus ? nowMs : nil)
            return .answer(status: status, reason: APNsReason(rawValue: reason), timestampMs: timestamp)
        case .topic(let bundle)?:
            let base = pushType.topicSuffix.isEmpty ? topic : String(topic.dropLast(pushType.topicSuffix.count))
            if base != bundle { return reject(.deviceTokenNotForTopic) }
        }
        if pushType == .liveactivity, let ended = activityEnded(token) { return reject(.unregistered, ended) }
        let request = NotificationRequest(
            token: token, topic: topic, pushType: pushType, priority: priority, expiration: expiration,
            collapseId: head.collapseId, notificationId: notificationId, payload: body)
        return .accept(request, apnsIdGenerated: apnsIdGenerated, endsActivity: endsActivity)
    }

    /// The topics `client` may use (nil: any), or why its credentials are refused. Shared by device sends,
    /// channel management and broadcasts.
    func credentialTopics(for client: Client) -> Result<[String]?, ReasonError> {
        switch client {
        case .anonymous: return .success(nil)
        case .certificate(let identity):
            guard !identity.topics.isEmpty, identity.development || identity.production else {
                return .failure(ReasonError(.badCertificate))
            }
            let fits = environment == .development ? identity.development : identity.production
            guard fits else { return .failure(ReasonError(.badCertificateEnvironment)) }
            return .success(identity.topics)
        case .token(.failure(let error)): return .failure(error)
        case .token(.success(let verified)): return .success(verified.topics.map { Array($0) })
        }
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
    }

    /// A bundle id (plus suffix): printable ASCII without spaces, at most 255 bytes.
    static func isWellFormedTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 255 && topic.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}
