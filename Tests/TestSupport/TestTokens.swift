import PushCore

/// A distinct valid 16-byte token for each index (the multiplier is odd, so the mapping is a bijection); `salt`
/// makes another family of tokens.
public func testToken(_ index: Int, salt: UInt64 = 0) -> DeviceToken {
    let mixed = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
    let hex = String(format: "%016llx%016llx", mixed, salt)
    return try! DeviceToken(parsing: hex)
}
