import Foundation

/// Where the client keeps its ``ClientState`` between launches. Injectable, so an app may keep it elsewhere (an app
/// group container shared with an extension) and tests can point it at a temporary directory.
public protocol StateStore: Sendable {
    /// The stored bytes, or nil when nothing was stored yet.
    func load() throws -> Data?
    /// Replaces the stored bytes — atomically: after a crash, the old bytes or the new ones, never a mix.
    func store(_ data: Data) throws
}

/// A file `installation.json` in a directory: the directory given on Linux; on Apple platforms, by default,
/// `Application Support/PushProviderClient/<app>/` (`DirectoryStateStore.applicationSupport(app:)`, a name only
/// those platforms have, so no link here). Written to a temporary file and renamed over the old one
/// (`Data.write(options: .atomic)`), so an app killed mid-write keeps the previous state.
public struct DirectoryStateStore: StateStore {
    /// The directory.
    public let directory: URL

    /// The state file's URL.
    public var fileURL: URL { directory.appendingPathComponent("installation.json") }

    /// A store in `directory` (created on the first write).
    public init(directory: URL) {
        self.directory = directory
    }

    public func load() throws -> Data? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        return try Data(contentsOf: fileURL)
    }

    public func store(_ data: Data) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try data.write(to: fileURL, options: .atomic)
    }

    #if canImport(Darwin)
    /// `Application Support/PushProviderClient/<app>/` in the app's container (excluded from nothing: the
    /// installation id should survive a restore onto the same device, where the token does too).
    public static func applicationSupport(app: String) throws -> DirectoryStateStore {
        let base = try FileManager.default.url(for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
        return DirectoryStateStore(directory: base.appendingPathComponent("PushProviderClient").appendingPathComponent(app))
    }
    #endif
}
