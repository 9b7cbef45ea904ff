import PushCore

extension ChannelBroadcastResult {
    /// The answer as the API and `--json` print it: `{"channelId","status","requestId","uniqueId"}`.
    public func json(channelId: String) -> JSONValue {
        let uniqueId: JSONValue = self.uniqueId.map { .string($0) } ?? .null
        let fields: [(String, JSONValue)] = [
            ("channelId", .string(channelId)), ("status", .int(Int64(status))), ("requestId", .string(requestId)),
            ("uniqueId", uniqueId),
        ]
        return .object(fields)
    }
}
