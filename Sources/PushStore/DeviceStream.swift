import PushCore

/// Batches of devices in token order, fetched lazily one keyset page at a time.
/// Iterate once; after the loop check ``error``.
public final class DeviceStream: Sequence, IteratorProtocol {
    private let registry: any RegistryStore
    private let app: String
    private let channel: String?
    private let environment: APNsEnvironment?
    private let batchSize: Int
    private var after: String
    private var finished = false
    /// The error that ended the stream early, if any.
    public private(set) var error: StoreError?

    init(registry: any RegistryStore, app: String, channel: String?, environment: APNsEnvironment?, batchSize: Int, after: String) {
        self.registry = registry
        self.app = app
        self.channel = channel
        self.environment = environment
        self.batchSize = batchSize
        self.after = after
    }

    /// The next non-empty batch, or nil at the end (or on error).
    public func next() -> [RegisteredDevice]? {
        guard !finished else { return nil }
        do {
            let batch = try registry.page(
                app: app, channel: channel, environment: environment, after: after, limit: batchSize)
            if batch.count < batchSize { finished = true }
            guard let last = batch.last else { return nil }
            after = last.token.hex
            return batch
        } catch {
            self.error = error
            finished = true
            return nil
        }
    }
}
