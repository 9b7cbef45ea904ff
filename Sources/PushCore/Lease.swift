/// Taking an app's broadcast lease.
public enum LeaseResult: Sendable, Equatable {
    /// This owner holds the lease now, under this fence. Fences only grow: every commit under the lease
    /// names it, so a run whose lease was taken over can no longer write.
    case acquired(fence: Int64)
    /// Another live owner holds it, running this broadcast.
    case held(broadcastId: String)
}
