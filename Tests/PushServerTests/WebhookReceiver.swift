import PushCore
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A real HTTP server on a loopback port standing in for an app backend's webhook: it records every request
/// (body and headers) and answers with the status the test sets.
final class WebhookReceiver: Sendable {
    struct Received: Sendable {
        let body: [UInt8]
        let headers: [String: String]
    }

    private let state = Mutex((status: 200, received: [Received]()))
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var url: String { "http://127.0.0.1:\(port)/hook" }
    var received: [Received] { state.withLock { $0.received } }

    /// Answers every later request with `status`.
    func answer(_ status: Int) { state.withLock { $0.status = status } }

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    static func start() async throws -> WebhookReceiver {
        let box = ReceiverBox()
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let status = box.receiver?.record(Received(body: Array(body.readableBytesView), headers: headers)) ?? 500
            return Response(status: .init(code: status))
        }
        let bound = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                bound.continuation.yield(channel.localAddress?.port ?? 0)
                bound.continuation.finish()
            },
            logger: Logger(label: "webhook-receiver"))
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: Logger(label: "webhook-receiver")))
        let task = Task { try await group.run() }
        var iterator = bound.stream.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let receiver = WebhookReceiver(port: port, group: group, task: task)
        box.receiver = receiver
        return receiver
    }

    private func record(_ request: Received) -> Int {
        state.withLock { s in
            s.received.append(request)
            return s.status
        }
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// Lets the route reach the receiver created after it.
private final class ReceiverBox: Sendable {
    private let value = Mutex<WebhookReceiver?>(nil)
    var receiver: WebhookReceiver? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
