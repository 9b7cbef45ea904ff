import Foundation
import Hummingbird
import Logging
import PushProviderClient
import ServiceLifecycle
import Synchronization

/// A real HTTP server on a loopback port (port 0, read back) in front of a real `pushctl serve`: it forwards every
/// request to the server and relays the answer, except the ones it is told to refuse, which it answers as the
/// server's rate limiter does (429, `Retry-After`, `{"error":{"code":"rate_limited",…}}`) without forwarding.
///
/// Why not the server's own limiter: its token bucket refills with time, so whether a request that follows another
/// gets a 429 (and whether its `Retry-After` is 1 or 2) depends on how long the machine took in between; on a loaded
/// machine it refilled and no 429 came. Here the 429 is certain, and everything else is the real server's.
final class ThrottlingFront: Sendable {
    /// One request that reached the front: when, and what it was answered.
    struct Arrival: Sendable {
        let route: String
        let received: ContinuousClock.Instant
        let status: Int
        let answered: ContinuousClock.Instant
    }

    private struct State {
        var refusals: [String] = []
        var arrivals: [Arrival] = []
    }

    /// The state the route and the test share.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    let port: Int
    private let shared: Shared
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Where the client reaches it.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// Every request that reached it, in order.
    var arrivals: [Arrival] { shared.state.withLock { $0.arrivals } }

    /// Answers the next `count` requests with 429 and `Retry-After: retryAfter` (not forwarded).
    func refuseNext(_ count: Int = 1, retryAfter: String) {
        shared.state.withLock { $0.refusals += Array(repeating: retryAfter, count: count) }
    }

    private init(port: Int, shared: Shared, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.shared = shared
        self.group = group
        self.task = task
    }

    /// Runs `body` with a front forwarding to `upstream`, and stops the front after it (thrown or not).
    static func with<T>(upstream: URL, _ body: (ThrottlingFront) async throws -> T) async throws -> T {
        let front = try await start(upstream: upstream)
        do {
            let result = try await body(front)
            try await front.stop()
            return result
        } catch {
            try? await front.stop()
            throw error
        }
    }

    private static func start(upstream: URL) async throws -> ThrottlingFront {
        let shared = Shared()
        let forwarder = URLSessionTransport()
        let router = Router()
        let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            let received = ContinuousClock.now
            let route = "\(request.method) \(request.uri.path)"
            let refusal = shared.state.withLock { s -> String? in s.refusals.isEmpty ? nil : s.refusals.removeFirst() }
            let answer: PushProviderClient.HTTPResponse
            if let refusal {
                answer = PushProviderClient.HTTPResponse(
                    status: 429, headers: ["Retry-After": refusal, "Content-Type": "application/json"],
                    body: Data(#"{"error":{"code":"rate_limited","message":"too many requests for this key; retry later"}}"#.utf8))
            } else {
                let body = try await request.body.collect(upTo: 1 << 20)
                var headers: [String: String] = [:]
                headers["Authorization"] = request.headers[.authorization]
                headers["Content-Type"] = request.headers[.contentType]
                headers["Accept"] = request.headers[.accept]
                answer = try await forwarder.send(PushProviderClient.HTTPRequest(
                    method: request.method.rawValue, url: URL(string: upstream.absoluteString + request.uri.string)!,
                    headers: headers, body: body.readableBytes == 0 ? nil : Data(body.readableBytesView)))
            }
            shared.state.withLock {
                $0.arrivals.append(Arrival(route: route, received: received, status: answer.status, answered: .now))
            }
            var fields = HTTPFields()
            fields[.contentType] = answer.headers["content-type"]
            fields[.retryAfter] = answer.headers["retry-after"]
            return Response(status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        router.on("**", method: .get, use: forward)
        router.on("**", method: .post, use: forward)
        router.on("**", method: .delete, use: forward)
        let bound = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "throttling-front")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                bound.continuation.yield(channel.localAddress?.port ?? 0)
                bound.continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            defer { bound.continuation.finish() }
            try await group.run()
        }
        var ports = bound.stream.makeAsyncIterator()
        guard let port = await ports.next(), port != 0 else {
            try await task.value
            throw ServeFailure("the throttling front did not start")
        }
        return ThrottlingFront(port: port, shared: shared, group: group, task: task)
    }

    private func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
