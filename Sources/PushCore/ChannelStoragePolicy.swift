/// A broadcast channel's `message-storage-policy`: whether APNs keeps the latest message for devices that
/// are offline when it is broadcast.
public enum ChannelStoragePolicy: Int, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// `0`: nothing is stored; a broadcast reaches only the devices online at the time.
    case noStorage = 0
    /// `1`: the most recent message is stored and delivered when a device comes back.
    case mostRecent = 1

    /// Parses `no-storage`, `most-recent` (case-insensitive, `_` accepted for `-`) or Apple's numbers `0` / `1`.
    public init?(parsing text: String) {
        switch text.lowercased().replacingUnderscores() {
        case "0", "no-storage", "nostorage": self = .noStorage
        case "1", "most-recent", "mostrecent": self = .mostRecent
        default: return nil
        }
    }

    /// The spelling for people and the command line: `no-storage` or `most-recent`.
    public var name: String {
        switch self {
        case .noStorage: "no-storage"
        case .mostRecent: "most-recent"
        }
    }

    /// ``name``.
    public var description: String { name }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
