import PushCore

/// A distinct valid 16-byte token for each index (the multiplier is odd, so the mapping is a bijection); `salt`
/// makes another family of tokens.
public func testToken(_ index: Int, salt: UInt64 = 0) -> DeviceToken {
    let mixed = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
    let hex = String(format: "%016llx%016llx", mixed, salt)
    return try! DeviceToken(parsing: hex)
}

/// `count` distinct 32-byte tokens, `prefix` then the index in hex: the broadcast fixtures' devices (the engine's on
/// a fake service, the send path's on the simulator), in key order.
public func prefixedTestTokens(_ count: Int, prefix: String = "aa") -> [DeviceToken] {
    (0..<count).map { i in
        let digits = String(i, radix: 16)
        return try! DeviceToken(parsing: prefix + String(repeating: "0", count: 62 - digits.count) + digits)
    }
}

/// The broadcast fixtures' alert ("Daily digest") of app `example`, to all devices or a channel.
public func digestBroadcast(id: String, channel: String? = nil, collapseId: String? = nil) throws -> BroadcastRecord {
    let prepared = try Payload(aps: APS(alert: .text("Daily digest"))).prepare()
    return BroadcastRecord(
        id: id, app: "example", payload: prepared.payload, pushType: prepared.pushType,
        priority: prepared.priority, collapseId: collapseId, channel: channel)
}
