import PushCore

/// How the simulator treats notifications for one device token (tokens not listed are healthy).
public enum DeviceBehaviour: Sendable, Equatable {
    /// 410 Unregistered with this `timestamp` (ms since 1970), or the current time when nil.
    case unregistered(timestampMs: Int64?)
    /// 400 BadDeviceToken: APNs does not know the token.
    case bad
    /// 400 BadDeviceToken: the token belongs to the other environment (a sandbox token sent to production).
    case otherEnvironment
    /// 429 TooManyRequests: too many notifications to this device.
    case tooManyRequests
    /// 500 InternalServerError for this device.
    case internalServerError
    /// The token was issued for this topic (bundle id); other topics get 400 DeviceTokenNotForTopic.
    case topic(String)
    /// Every request that passes the other checks gets this status (400–599) and reason — any reason, known to
    /// this version or not (Apple adds reasons) — with `timestamp` when given (a 410 without one gets the time of
    /// the request, as APNs sends).
    case answer(status: Int, reason: String, timestampMs: Int64?)

    /// The statuses an ``answer(status:reason:timestampMs:)`` may use: APNs' error answers.
    public static let answerStatuses = 400...599

    /// The `state` spelling used in a devices file.
    public var name: String {
        switch self {
        case .unregistered: "unregistered"
        case .bad: "bad"
        case .otherEnvironment: "otherEnvironment"
        case .tooManyRequests: "tooManyRequests"
        case .internalServerError: "internalServerError"
        case .topic: "topic"
        case .answer: "answer"
        }
    }
}

/// Parsing of the `--devices FILE` format.
public enum DeviceBehaviourFile {
    /// Parses a devices file: a JSON array (or `{"devices": [...]}`) of objects
    /// `{"token": HEX, "state": "unregistered"|"bad"|"otherEnvironment"|"tooManyRequests"|
    /// "internalServerError"|"topic"|"answer", "timestamp": MS?, "topic": BUNDLE_ID?, "status": 400…599?,
    /// "reason": REASON?}` (`status` and `reason` for `answer`, which answers with any status and reason).
    public static func parse(_ bytes: [UInt8]) throws(SimulatorError) -> [DeviceToken: DeviceBehaviour] {
        let root: JSONValue
        do { root = try JSONValue(parsing: bytes) } catch {
            throw SimulatorError(.badDevicesFile, "devices file: \(error)")
        }
        let list: [JSONValue]
        switch root {
        case .array(let items): list = items
        case .object where root["devices"] != nil:
            guard case .array(let items)? = root["devices"] else {
                throw SimulatorError(.badDevicesFile, "devices file: \"devices\" must be an array")
            }
            list = items
        default: throw SimulatorError(.badDevicesFile, "devices file must be a JSON array of devices")
        }
        var result: [DeviceToken: DeviceBehaviour] = [:]
        for (i, item) in list.enumerated() {
            guard let text = item["token"]?.stringValue else {
                throw SimulatorError(.badDevicesFile, "devices file: entry \(i) has no \"token\"")
            }
            let token: DeviceToken
            do { token = try DeviceToken(parsing: text) } catch {
                throw SimulatorError(.badDevicesFile, "devices file: entry \(i): \(error)")
            }
            func timestamp() throws(SimulatorError) -> Int64? {
                guard let ts = item["timestamp"], ts != .null else { return nil }
                guard let ms = ts.intValue else {
                    throw SimulatorError(.badDevicesFile, "devices file: entry \(i): timestamp must be ms since 1970")
                }
                return ms
            }
            switch item["state"]?.stringValue {
            case "unregistered":
                result[token] = .unregistered(timestampMs: try timestamp())
            case "answer":
                guard let status = item["status"]?.intValue, DeviceBehaviour.answerStatuses.contains(Int(status)) else {
                    throw SimulatorError(.badDevicesFile, "devices file: entry \(i): state answer needs \"status\" 400…599")
                }
                guard let reason = item["reason"]?.stringValue, !reason.isEmpty else {
                    throw SimulatorError(.badDevicesFile, "devices file: entry \(i): state answer needs \"reason\"")
                }
                result[token] = .answer(status: Int(status), reason: reason, timestampMs: try timestamp())
            case "bad": result[token] = .bad
            case "otherEnvironment": result[token] = .otherEnvironment
            case "tooManyRequests": result[token] = .tooManyRequests
            case "internalServerError": result[token] = .internalServerError
            case "topic":
                guard let topic = item["topic"]?.stringValue, !topic.isEmpty else {
                    throw SimulatorError(.badDevicesFile, "devices file: entry \(i): state topic needs \"topic\"")
                }
                result[token] = .topic(topic)
            case let other:
                throw SimulatorError(
                    .badDevicesFile,
                    "devices file: entry \(i): state must be unregistered, bad, otherEnvironment, tooManyRequests, internalServerError, topic or answer, not \(other ?? "missing")")
            }
        }
        return result
    }
}
