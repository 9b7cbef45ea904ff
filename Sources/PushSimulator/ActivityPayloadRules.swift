import PushCore

/// Apple's rules for a Live Activity payload (`apns-push-type: liveactivity`, to an activity's push token or
/// broadcast on a channel), from "Starting and updating Live Activities with ActivityKit push notifications".
///
/// Pure. Only liveactivity requests are parsed, so ordinary pushes pay nothing for it.
enum ActivityPayloadRules {
    /// What a valid payload asks of the activity.
    enum Event: String, Sendable, Equatable {
        case start, update, end
    }

    /// The reason for every payload-shape violation: APNs documents no dedicated one, and the simulator
    /// already answers `BadPayload` for a body that is not a JSON object (see docs/channels-wire.md).
    static let badPayload = APNsReason.unknown("BadPayload")

    /// Keys only a `start` event may carry.
    static let startOnlyKeys = ["attributes-type", "attributes", "input-push-token", "input-push-channel"]

    /// Checks the priority (5 or 10) and the payload (already known to be one JSON object).
    static func check(priority: PushPriority, payload: [UInt8]) -> Result<Event, ReasonError> {
        guard priority == .immediate || priority == .conserve else { return .failure(ReasonError(.badPriority)) }
        guard let root = try? JSONValue(parsing: payload), let aps = root["aps"], aps.objectPairs != nil else {
            return .failure(ReasonError(badPayload))
        }
        guard let text = aps["event"]?.stringValue, let event = Event(rawValue: text) else { return .failure(ReasonError(badPayload)) }
        guard isInteger(aps["timestamp"]) else { return .failure(ReasonError(badPayload)) }
        for key in ["stale-date", "dismissal-date"] {
            if let value = aps[key], !isInteger(value) { return .failure(ReasonError(badPayload)) }
        }
        if let state = aps["content-state"], state.objectPairs == nil { return .failure(ReasonError(badPayload)) }
        switch event {
        case .start:
            guard aps["content-state"] != nil, aps["attributes-type"]?.stringValue != nil,
                aps["attributes"]?.objectPairs != nil
            else { return .failure(ReasonError(badPayload)) }
            if aps["dismissal-date"] != nil { return .failure(ReasonError(badPayload)) }
            if let channel = aps["input-push-channel"], channel.stringValue?.isEmpty != false { return .failure(ReasonError(badPayload)) }
        case .update, .end:
            if event == .update, aps["content-state"] == nil { return .failure(ReasonError(badPayload)) }
            if event == .update, aps["dismissal-date"] != nil { return .failure(ReasonError(badPayload)) }
            for key in startOnlyKeys where aps[key] != nil { return .failure(ReasonError(badPayload)) }
        }
        return .success(event)
    }

    private static func isInteger(_ value: JSONValue?) -> Bool {
        if case .int(_)? = value { return true }
        return false
    }
}
