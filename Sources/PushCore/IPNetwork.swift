/// An address range in CIDR form (`10.0.0.0/8`, `fd00::/8`): what an operator names in
/// `apps.ID.unifiedpush.exemptHosts` to let a self-hosted distributor on a private network through the address check.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the range (the bits past the prefix cleared).
    public let base: IPAddress
    /// The prefix length: 0…32 for IPv4, 0…128 for IPv6.
    public let prefixLength: Int

    /// Parses `address/length`; nil for anything else (a bare address is not a network). Bits set past the prefix are
    /// refused (`10.0.0.1/8` is a typo more often than a wish), so what is written is the range.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let address = IPAddress(literal: parts[0]), (1...3).contains(parts[1].count),
              parts[1].allSatisfy(\.isASCII), let length = Int(parts[1]), length >= 0, length <= address.bytes.count * 8
        else { return nil }
        guard Self.masked(address.bytes, length) == address.bytes else { return nil }
        base = address
        prefixLength = length
    }

    /// True when `address` is in the range (an IPv4 address is never in an IPv6 range, nor the other way round).
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == base.bytes.count && Self.masked(address.bytes, prefixLength) == base.bytes
    }

    public var description: String { "\(base)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, length - index * 8))
            return bits == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }
}
