extension Payload {
    /// Validates the payload against Apple's rules, derives push type and priority, encodes it compactly,
    /// and shortens an oversized alert body at a grapheme boundary (appending "…") when allowed.
    public func prepare(_ options: NotificationOptions = NotificationOptions()) throws(PayloadError) -> PreparedNotification {
        for (key, _) in custom where key == "aps" {
            throw PayloadError(.badAps, "custom key 'aps' is reserved for Apple's dictionary")
        }
        try aps.validate()
        let silent = aps.contentAvailable && !aps.isUserVisible
        let pushType = try PushRules.pushType(options.pushType, silent: silent, userVisible: aps.isUserVisible)
        let header = try PushRules.headers(options, pushType: pushType)
        var payload = self
        var bytes = payload.json.encoded
        var truncated = false
        if bytes.count > header.limit {
            guard pushType == .alert, options.allowTruncation, let body = aps.alert?.body else {
                throw PushRules.tooLarge(bytes.count, header.limit, hint: pushType == .alert ? "" : " (only alert text is truncated)")
            }
            payload.aps.alert?.body = ""
            let base = payload.json.encoded.count
            guard let shortened = Self.truncate(body, budget: header.limit - base) else {
                throw PushRules.tooLarge(bytes.count, header.limit, hint: " even with an empty alert body")
            }
            payload.aps.alert?.body = shortened
            bytes = payload.json.encoded
            truncated = true
        }
        return PreparedNotification(
            payload: bytes, pushType: pushType, priority: header.priority, expiration: options.expiration,
            collapseId: options.collapseId, notificationId: options.notificationId, limit: header.limit, truncated: truncated)
    }

    /// The longest grapheme-cluster prefix of `text` that, followed by "…", adds at most `budget` bytes to
    /// a payload whose body is currently `""` (the quotes are already counted there). JSON escaping is
    /// counted per byte, so the result is maximal. Returns nil when not even "…" fits.
    static func truncate(_ text: String, budget: Int) -> String? {
        let ellipsis = 3  // "…" is 3 bytes of UTF-8 and needs no escaping.
        var remaining = budget - ellipsis
        guard remaining >= 0 else { return nil }
        var end = text.startIndex
        for character in text {
            var cost = 0
            for byte in character.utf8 { cost += JSONValue.escapedLength(byte) }
            if cost > remaining { break }
            remaining -= cost
            end = text.index(after: end)
        }
        return String(text[..<end]) + "…"
    }
}

extension PreparedNotification {
    /// Validates a caller-supplied JSON payload and derives its headers. The bytes are sent as given
    /// (surrounding whitespace aside): raw payloads are never rewritten, so they are never truncated.
    public init(raw: [UInt8], options: NotificationOptions = NotificationOptions()) throws(PayloadError) {
        var bytes = raw[...]
        while let f = bytes.first, [0x20, 0x09, 0x0a, 0x0d].contains(f) { bytes = bytes.dropFirst() }
        while let l = bytes.last, [0x20, 0x09, 0x0a, 0x0d].contains(l) { bytes = bytes.dropLast() }
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch {
            throw PayloadError(.invalidJSON, "payload is not valid JSON: \(error)")
        }
        guard json.objectPairs != nil else { throw PayloadError(.badAps, "payload must be a JSON object") }
        guard let aps = json["aps"], let apsPairs = aps.objectPairs else {
            throw PayloadError(.badAps, "payload must have an \"aps\" object")
        }
        let keys = Set(apsPairs.map(\.0))
        let userVisible = !keys.isDisjoint(with: ["alert", "sound", "badge"])
        let silent = aps["content-available"]?.intValue == 1 && !userVisible
        if let badge = aps["badge"], !(0...Int64(Int32.max)).contains(badge.intValue ?? -1) {
            throw PayloadError(.invalidField("badge"), "aps.badge must be an integer from 0 to 2147483647")
        }
        let pushType = try PushRules.pushType(options.pushType, silent: silent, userVisible: userVisible)
        let header = try PushRules.headers(options, pushType: pushType)
        guard bytes.count <= header.limit else {
            throw PushRules.tooLarge(bytes.count, header.limit, hint: " (raw payloads are never truncated)")
        }
        self.init(
            payload: Array(bytes), pushType: pushType, priority: header.priority, expiration: options.expiration,
            collapseId: options.collapseId, notificationId: options.notificationId, limit: header.limit, truncated: false)
    }
}

/// The derivation rules shared by built and raw payloads.
enum PushRules {
    static func pushType(_ explicit: PushType?, silent: Bool, userVisible: Bool) throws(PayloadError) -> PushType {
        guard let explicit else {
            if userVisible { return .alert }
            if silent { return .background }
            throw PayloadError(
                .emptyNotification,
                "nothing to deliver: add an alert, badge or sound, use content-available (--silent), or name the push type")
        }
        if explicit == .background && !silent {
            throw PayloadError(
                .pushTypeMismatch,
                "push type background needs an aps with only content-available: 1 (no alert, sound or badge)")
        }
        if explicit == .alert && !userVisible {
            throw PayloadError(.pushTypeMismatch, "push type alert needs an alert, sound or badge")
        }
        return explicit
    }

    static func headers(_ options: NotificationOptions, pushType: PushType) throws(PayloadError) -> (priority: PushPriority, limit: Int) {
        let priority = options.priority ?? (pushType == .background ? .conserve : .immediate)
        if pushType == .background && priority == .immediate {
            throw PayloadError(
                .priorityNotAllowed,
                "priority 10 is not allowed for background (silent) pushes: Apple requires priority 5 (or 1)")
        }
        if let collapseId = options.collapseId {
            if collapseId.utf8.count > 64 {
                throw PayloadError(.collapseIdTooLong, "collapse id is \(collapseId.utf8.count) bytes; at most 64 bytes are allowed")
            }
            // An HTTP header value: printable ASCII only (no control character can split or end the header), which
            // also makes APNs' 64-byte limit a 64-character one that the OpenAPI description can state exactly.
            if !collapseId.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) {
                throw PayloadError(.collapseIdNotPrintable, "collapse id must be printable ASCII (space to ~): it is sent as an HTTP header")
            }
        }
        if let notificationId = options.notificationId, !NotificationID.isValid(notificationId) {
            throw PayloadError(.badApnsId, "apns-id must be a UUID (8-4-4-4-12 hex digits)")
        }
        if let expiration = options.expiration, expiration < 0 {
            throw PayloadError(.invalidField("expiration"), "expiration must be epoch seconds ≥ 0 (0 = deliver once)")
        }
        var limit = pushType.payloadLimit
        if let custom = options.limit {
            guard custom > 0 else { throw PayloadError(.invalidField("limit"), "payload limit must be a positive number of bytes") }
            limit = min(limit, custom)
        }
        return (priority, limit)
    }

    static func tooLarge(_ size: Int, _ limit: Int, hint: String) -> PayloadError {
        PayloadError(.tooLarge(size: size, limit: limit), "payload is \(size) bytes; the limit is \(limit) bytes\(hint)")
    }
}

extension APS {
    /// Checks value ranges Apple documents.
    func validate() throws(PayloadError) {
        if let badge, badge < 0 { throw PayloadError(.invalidField("badge"), "badge must be ≥ 0") }
        if let relevanceScore, !(0...1).contains(relevanceScore) {
            throw PayloadError(.invalidField("relevance-score"), "relevance-score must be between 0 and 1")
        }
        if case .dictionary(_, _, let volume) = sound, !(0...1).contains(volume) {
            throw PayloadError(.invalidField("sound.volume"), "sound volume must be between 0 and 1")
        }
        if let event, !["start", "update", "end"].contains(event) {
            throw PayloadError(.invalidField("event"), "event must be start, update or end")
        }
        if contentAvailable && isUserVisible == false && mutableContent {
            // Allowed by Apple, but a silent push cannot be modified by an extension: say so early.
            throw PayloadError(.invalidField("mutable-content"), "mutable-content has no effect on a silent push")
        }
    }
}
