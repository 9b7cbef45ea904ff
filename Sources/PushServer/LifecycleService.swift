import ServiceLifecycle

/// A background part of the server as a ServiceLifecycle service: `start` when the group starts, then wait for
/// graceful shutdown (or cancellation), then `stop`, which drains it. So every part starts and stops on the
/// group's one path, in the group's order (the last service listed stops first).
public struct LifecycleService: Service {
    /// For logs and errors.
    public let name: String
    let start: @Sendable () async -> Void
    let stop: @Sendable () async -> Void

    /// A service that runs `start`, waits for graceful shutdown, then runs `stop`.
    public init(_ name: String, start: @escaping @Sendable () async -> Void = {}, stop: @escaping @Sendable () async -> Void = {}) {
        self.name = name
        self.start = start
        self.stop = stop
    }

    /// A service that is one loop, ended by cancelling it at graceful shutdown.
    public static func loop(_ name: String, _ body: @escaping @Sendable () async -> Void) -> LifecycleService {
        LifecycleService(name, start: {
            _ = try? await cancelWhenGracefulShutdown { await body() }
        })
    }

    public func run() async throws {
        await start()
        try? await gracefulShutdown()
        await stop()
    }
}
