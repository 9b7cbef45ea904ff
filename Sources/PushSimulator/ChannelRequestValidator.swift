import PushCore

/// APNs' rules for broadcast channels (iOS 18): the channel management API (`/1/apps/{bundle-id}/channels`,
/// `/1/apps/{bundle-id}/all-channels`) and broadcast sends (`/4/broadcasts/apps/{bundle-id}`).
///
/// Pure: it checks one complete request against everything that does not depend on which channels exist,
/// and hands back the operation; ``ChannelStore`` then applies it (unknown channels, the channel limit,
/// expirations on no-storage channels).
struct ChannelRequestValidator: Sendable {
    /// A request that passed every stateless rule.
    enum Operation: Sendable, Equatable {
        case create(bundleId: String, policy: ChannelStoragePolicy)
        case read(bundleId: String, channelId: String)
        case list(bundleId: String)
        case delete(bundleId: String, channelId: String)
        case broadcast(Broadcast)
    }

    /// A valid broadcast send.
    struct Broadcast: Sendable, Equatable {
        var bundleId: String
        var channelId: String
        var priority: PushPriority
        var expiration: Int64?
        var payload: [UInt8]
    }

    /// Credentials and topics work as for device sends.
    var requests: RequestValidator
    /// Bundle ids without the broadcast capability: FeatureNotEnabled.
    var broadcastDisabled: Set<String>

    /// True for the paths this validator answers: `/1/apps/…` and `/4/broadcasts/…` (everything else,
    /// including bad paths, goes to ``RequestValidator``).
    static func handles(path: String?) -> Bool {
        // Device sends ("/3/device/…") leave after two bytes: this runs for every request.
        guard let path else { return false }
        var bytes = path.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "/"), let version = bytes.next(),
            version == UInt8(ascii: "1") || version == UInt8(ascii: "4")
        else { return false }
        return path.hasPrefix("/1/apps/") || path.hasPrefix("/4/broadcasts/")
    }

    /// Applies the rules in the order APNs reports them: path and method, duplicate headers, credentials,
    /// request id, bundle id, capability, then the operation's own headers and body.
    func validate(head: RequestValidator.Head, body: [UInt8], client: RequestValidator.Client) -> Result<Operation, ReasonError> {
        enum Route { case channels, allChannels, broadcast }
        guard let path = head.path else { return .failure(ReasonError(.badPath)) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "/1/apps/B/channels" → ["", "1", "apps", "B", "channels"]; "/4/broadcasts/apps/B" → ["", "4", "broadcasts", "apps", "B"].
        let route: Route
        let bundle: Substring
        if parts.count == 5, parts[1] == "1", parts[2] == "apps", parts[4] == "channels" || parts[4] == "all-channels" {
            route = parts[4] == "channels" ? .channels : .allChannels
            bundle = parts[3]
        } else if parts.count == 5, parts[1] == "4", parts[2] == "broadcasts", parts[3] == "apps" {
            route = .broadcast
            bundle = parts[4]
        } else {
            return .failure(ReasonError(.badPath))
        }
        let bundleId = String(bundle)
        guard RequestValidator.isWellFormedTopic(bundleId) else { return .failure(ReasonError(.badPath)) }
        let method = head.method ?? ""
        switch route {
        case .channels: guard ["POST", "GET", "DELETE"].contains(method) else { return .failure(ReasonError(.methodNotAllowed)) }
        case .allChannels: guard method == "GET" else { return .failure(ReasonError(.methodNotAllowed)) }
        case .broadcast: guard method == "POST" else { return .failure(ReasonError(.methodNotAllowed)) }
        }
        if head.duplicate { return .failure(ReasonError(.duplicateHeaders)) }
        switch requests.credentialTopics(for: client) {
        case .failure(let reason): return .failure(reason)
        case .success(let topics?) where !topics.contains(bundleId): return .failure(ReasonError(.topicDisallowed))
        case .success: break
        }
        if let id = head.requestId, !NotificationID.isValid(id) { return .failure(ReasonError(.badMessageId)) }
        if broadcastDisabled.contains(bundleId) { return .failure(ReasonError(.featureNotEnabled)) }

        switch (route, method) {
        case (.allChannels, _):
            return .success(.list(bundleId: bundleId))
        case (.channels, "POST"):
            return Self.createBody(body).map { .create(bundleId: bundleId, policy: $0) }
        case (.channels, let method):
            return Self.channelId(head).map {
                method == "GET" ? .read(bundleId: bundleId, channelId: $0) : .delete(bundleId: bundleId, channelId: $0)
            }
        case (.broadcast, _):
            return broadcast(head: head, body: body, bundleId: bundleId).map { .broadcast($0) }
        }
    }

    /// The create body: `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    static func createBody(_ body: [UInt8]) -> Result<ChannelStoragePolicy, ReasonError> {
        if body.isEmpty { return .failure(ReasonError(.payloadEmpty)) }
        guard JSONSyntax.isObject(body), let json = try? JSONValue(parsing: body) else {
            return .failure(ReasonError(ActivityPayloadRules.badPayload))
        }
        guard case .int(let number)? = json["message-storage-policy"],
            let policy = ChannelStoragePolicy(rawValue: Int(number))
        else { return .failure(ReasonError(.badMessageStoragePolicy)) }
        guard json["push-type"]?.stringValue == "LiveActivity" else { return .failure(ReasonError(.invalidPushType)) }
        return .success(policy)
    }

    /// The `apns-channel-id` header: present and base64 text.
    static func channelId(_ head: RequestValidator.Head) -> Result<String, ReasonError> {
        guard let id = head.channelId, !id.isEmpty else { return .failure(ReasonError(.missingChannelId)) }
        guard isBase64(id) else { return .failure(ReasonError(.badChannelId)) }
        return .success(id)
    }

    /// Standard base64 (RFC 4648 §4) with padding, at most 256 characters.
    static func isBase64(_ text: String) -> Bool {
        let u = Array(text.utf8)
        guard !u.isEmpty, u.count % 4 == 0, u.count <= 256 else { return false }
        var padding = 0
        for (i, c) in u.enumerated() {
            if c == UInt8(ascii: "=") {
                padding += 1
                guard i >= u.count - 2 else { return false }
                continue
            }
            guard padding == 0 else { return false }
            let ok = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)
                || c == UInt8(ascii: "+") || c == UInt8(ascii: "/")
            guard ok else { return false }
        }
        return padding <= 2
    }

    /// A broadcast's headers and Live Activity payload.
    private func broadcast(head: RequestValidator.Head, body: [UInt8], bundleId: String) -> Result<Broadcast, ReasonError> {
        let channelId: String
        switch Self.channelId(head) {
        case .failure(let reason): return .failure(reason)
        case .success(let id): channelId = id
        }
        guard head.pushType == PushType.liveactivity.rawValue else { return .failure(ReasonError(.invalidPushType)) }
        var priority = PushPriority.immediate
        if let text = head.priority {
            guard let value = Int(text), let parsed = PushPriority(rawValue: value) else { return .failure(ReasonError(.badPriority)) }
            priority = parsed
        }
        var expiration: Int64? = nil
        if let text = head.expiration {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
                return .failure(ReasonError(.badExpirationDate))
            }
            expiration = value
        }
        if body.isEmpty { return .failure(ReasonError(.payloadEmpty)) }
        if body.count > PushType.liveactivity.payloadLimit { return .failure(ReasonError(.payloadTooLarge)) }
        guard JSONSyntax.isObject(body) else { return .failure(ReasonError(ActivityPayloadRules.badPayload)) }
        if case .failure(let reason) = ActivityPayloadRules.check(priority: priority, payload: body) {
            return .failure(reason)
        }
        return .success(Broadcast(bundleId: bundleId, channelId: channelId, priority: priority, expiration: expiration, payload: body))
    }
}
