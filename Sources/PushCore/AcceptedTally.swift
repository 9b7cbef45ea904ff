/// Accepted notifications a commit settles for its broadcast's counts. An accepted device has no row of its
/// own, so the engine counts it — once the shard's checkpoint passes it (a device past the checkpoint is sent
/// again after a crash, and must not be counted twice), or at once when it was already behind the checkpoint
/// (a device that waited, and the retry pass).
public struct AcceptedTally: Sendable, Equatable {
    /// Accepted devices.
    public var count = 0
    /// Of them, those that needed more than one request.
    public var retried = 0
    /// Of them, those that may have reached the device twice.
    public var possiblyDuplicated = 0

    /// An empty tally.
    public init() {}

    /// A tally of these numbers.
    public init(count: Int, retried: Int, possiblyDuplicated: Int) {
        self.count = count
        self.retried = retried
        self.possiblyDuplicated = possiblyDuplicated
    }

    /// Counts one accepted device.
    public mutating func add(retried: Bool, possiblyDuplicated: Bool) {
        count += 1
        if retried { self.retried += 1 }
        if possiblyDuplicated { self.possiblyDuplicated += 1 }
    }
}
