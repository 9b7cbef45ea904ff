import PushSimulator
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A deliberately low-level HTTP/2 client for the simulator's tests: it writes raw frames (so it can send
/// duplicate headers, half-open streams and pipelined bursts) and records every frame the server sends.
final class H2TestClient: @unchecked Sendable {
    // Mutable state below is only touched on `channel.eventLoop`.
    let channel: any Channel
    let collector: FrameCollector
    private var nextStreamID = 1

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects over TLS, trusting `caPEM`, optionally presenting a client identity.
    static func connect(
        port: Int, caPEM: String, identity: SimulatorPKI.Identity? = nil, alpn: [String] = ["h2"],
        timeout: TimeAmount = .seconds(30), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        firstBurst: [Request]? = nil
    ) async throws -> H2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))
        tls.applicationProtocols = alpn
        if let identity {
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.keyPEM.utf8), format: .pem))
        }
        let context = try NIOSSLContext(configuration: tls)
        let collector = FrameCollector()
        collector.burstOnActive = firstBurst
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 100)]
                    // Let tests send header blocks a normal client never would (the server must reject them).
                    connection.headerBlockValidation = .disabled
                    try sync.addHandler(NIOHTTP2Handler(mode: .client, connectionConfiguration: connection))
                    try sync.addHandler(collector)
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        if firstBurst != nil, let client = try await channel.eventLoop.submit({ collector.firstClient }).get() { return client }
        let client = H2TestClient(channel: channel, collector: collector)
        // Wait for the TLS handshake and the server's SETTINGS, so failures surface here.
        do {
            try await client.withTimeout(timeout) { client.collector.settingsReceived.futureResult }
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    fileprivate init(channel: any Channel, collector: FrameCollector) {
        self.channel = channel
        self.collector = collector
    }

    /// A request as raw header pairs (duplicates allowed) and a body.
    struct Request: Sendable {
        var method = "POST"
        var path: String
        var headers: [(String, String)] = []
        var body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
    }

    /// The answer: status and headers, the body, or the RST_STREAM code.
    struct Response: Sendable {
        var status: Int?
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var resetCode: HTTP2ErrorCode?
        var streamID: HTTP2StreamID

        func header(_ name: String) -> String? { headers.first(where: { $0.0 == name })?.1 }
    }

    /// Sends one request and waits for its answer.
    func send(_ request: Request, timeout: TimeAmount = .seconds(30)) async throws -> Response {
        try await sendBatch([request], timeout: timeout)[0]
    }

    /// Writes all requests in one flush (one TCP segment on loopback) and waits for every answer.
    func sendBatch(_ requests: [Request], timeout: TimeAmount = .seconds(30)) async throws -> [Response] {
        try await sendBursts([requests], timeout: timeout)
    }

    /// Writes each burst with its own flush, in order, without waiting in between; returns every answer.
    func sendBursts(_ bursts: [[Request]], timeout: TimeAmount = .seconds(30)) async throws -> [Response] {
        let futures = try await channel.eventLoop.submit { () -> [EventLoopFuture<Response>] in
            bursts.flatMap { burst in
                let futures = burst.map { self.write($0, flush: false) }
                self.channel.flush()
                return futures
            }
        }.get()
        var out: [Response] = []
        for f in futures { out.append(try await withTimeout(timeout) { f }) }
        return out
    }

    /// Sends each request the moment the previous one's answer arrives, and returns every answer. The chain runs on
    /// the event loop: had the test's task sent each next request, the gap would be however long the task waits for a
    /// thread of the cooperative pool — seconds in a busy parallel run (30 round trips took 67 s, against 0.9 s
    /// alone), and a test of how the server treats such a client would measure the run instead.
    func sendOneAtATime(_ requests: [Request], timeout: TimeAmount = .seconds(30)) async throws -> [Response] {
        let chain = channel.eventLoop.flatSubmit { self.sendChained(requests[...], answered: []) }
        return try await withTimeout(timeout) { chain }
    }

    /// On the event loop: the first request, then the rest once its answer came.
    private func sendChained(_ requests: ArraySlice<Request>, answered: [Response]) -> EventLoopFuture<[Response]> {
        guard let first = requests.first else { return channel.eventLoop.makeSucceededFuture(answered) }
        return write(first, flush: true).flatMap { self.sendChained(requests.dropFirst(), answered: answered + [$0]) }
    }

    /// Writes the frames of one request without flushing; returns the future answer.
    private func write(_ request: Request, flush: Bool) -> EventLoopFuture<Response> {
        let empty = request.body.isEmpty
        let (id, future) = writeHeaders(request, endStream: empty)
        if !empty {
            let buffer = channel.allocator.buffer(bytes: request.body)
            channel.write(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        if flush { channel.flush() }
        return future
    }

    /// Writes a request's HEADERS only and flushes, leaving the stream open until ``finish(_:body:)``; returns its id
    /// and the future answer.
    func open(_ request: Request) async throws -> (HTTP2StreamID, EventLoopFuture<Response>) {
        try await channel.eventLoop.submit { () -> (HTTP2StreamID, EventLoopFuture<Response>) in
            let opened = self.writeHeaders(request, endStream: false)
            self.channel.flush()
            return opened
        }.get()
    }

    /// The streams of the `firstBurst` given to ``connect(port:caPEM:identity:alpn:timeout:group:firstBurst:)`` (left
    /// open until ``finish(_:body:)``): their ids and future answers.
    var firstBurst: [(HTTP2StreamID, EventLoopFuture<Response>)] {
        get async throws { try await channel.eventLoop.submit { self.collector.firstBurst }.get() }
    }

    /// On the event loop: the HEADERS frame of a new stream for `request`, written without flushing; returns the
    /// stream's id and its future answer.
    fileprivate func writeHeaders(_ request: Request, endStream: Bool) -> (HTTP2StreamID, EventLoopFuture<Response>) {
        let id = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        let future = collector.expect(id, eventLoop: channel.eventLoop)
        var headers = HPACKHeaders([
            (":method", request.method), (":scheme", "https"), (":authority", "localhost"), (":path", request.path),
        ])
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        channel.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: endStream))), promise: nil)
        return (id, future)
    }

    /// Sends the body of a stream ``open(_:)`` left open, ending it.
    func finish(_ id: HTTP2StreamID, body: [UInt8]) {
        let buffer = channel.allocator.buffer(bytes: body)
        channel.writeAndFlush(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
    }

    /// Sends RST_STREAM for a stream (as curl does after every body-less response).
    func reset(_ id: HTTP2StreamID, code: HTTP2ErrorCode = .cancel) {
        channel.writeAndFlush(HTTP2Frame(streamID: id, payload: .rstStream(code)), promise: nil)
    }

    /// Waits until the server closes the connection.
    func waitForClose(timeout: TimeAmount = .seconds(30)) async throws {
        try await withTimeout(timeout) { self.channel.closeFuture }
    }

    func close() async {
        try? await channel.close()
    }

    var goAways: [(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode, debug: String)] {
        get async throws { try await channel.eventLoop.submit { self.collector.goAways }.get() }
    }

    var settings: [[HTTP2Setting]] {
        get async throws { try await channel.eventLoop.submit { self.collector.settings }.get() }
    }

    /// Fails with ``Failure`` if `body`'s future does not complete in time.
    func withTimeout<T: Sendable>(_ timeout: TimeAmount, _ body: @escaping @Sendable () -> EventLoopFuture<T>) async throws -> T {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: T.self)
        let task = loop.scheduleTask(in: timeout) { promise.fail(Failure(description: "timed out after \(timeout)")) }
        body().whenComplete { result in
            task.cancel()
            promise.completeWith(result)
        }
        return try await promise.futureResult.get()
    }
}

/// Records what the server sends and completes per-stream futures.
final class FrameCollector: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame

    var goAways: [(lastStreamID: HTTP2StreamID, code: HTTP2ErrorCode, debug: String)] = []
    var settings: [[HTTP2Setting]] = []
    /// The streams ``H2TestClient`` opened as the connection came up, and that client.
    var firstBurst: [(HTTP2StreamID, EventLoopFuture<H2TestClient.Response>)] = []
    var firstClient: H2TestClient?
    /// Requests whose HEADERS go out as the connection becomes active (``H2TestClient/firstBurst``).
    var burstOnActive: [H2TestClient.Request]?
    var settingsReceived: EventLoopPromise<Void>!
    private var settingsDone = false
    private var waiting: [HTTP2StreamID: (EventLoopPromise<H2TestClient.Response>, H2TestClient.Response)] = [:]

    func handlerAdded(context: ChannelHandlerContext) {
        settingsReceived = context.eventLoop.makePromise()
    }

    /// Writes ``burstOnActive`` in channelActive, right after NIOHTTP2Handler wrote the client's preface and before
    /// the channel has read a byte: the streams go out with the preface (the TLS handler holds them until its
    /// handshake is done), before the server's SETTINGS can have arrived — what libcurl does on a new connection.
    /// Written from a task submitted once `connect` returned, they went out after the server's SETTINGS (limit 1)
    /// on a busy box twice in CI: NIO's client then queued the second stream until the first closed, the server never
    /// saw a stream over its limit, and the test timed out.
    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let burst = burstOnActive else { return }
        let client = H2TestClient(channel: context.channel, collector: self)
        firstBurst = burst.map { client.writeHeaders($0, endStream: false) }
        firstClient = client
        context.channel.flush()
    }

    func expect(_ id: HTTP2StreamID, eventLoop: any EventLoop) -> EventLoopFuture<H2TestClient.Response> {
        let promise = eventLoop.makePromise(of: H2TestClient.Response.self)
        waiting[id] = (promise, H2TestClient.Response(streamID: id))
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let list)):
            settings.append(list)
            if !settingsDone {
                settingsDone = true
                settingsReceived.succeed(())
            }
        case .goAway(let last, let code, let debug):
            goAways.append((last, code, debug.map { String(buffer: $0) } ?? ""))
        case .headers(let h):
            guard var entry = waiting[frame.streamID] else { return }
            for (name, value, _) in h.headers {
                if name == ":status" { entry.1.status = Int(value) } else { entry.1.headers.append((name, value)) }
            }
            waiting[frame.streamID] = entry
            if h.endStream { finish(frame.streamID) }
        case .data(let d):
            guard var entry = waiting[frame.streamID] else { return }
            if case .byteBuffer(let b) = d.data { entry.1.body += b.readableBytesView }
            waiting[frame.streamID] = entry
            if d.endStream { finish(frame.streamID) }
        case .rstStream(let code):
            guard var entry = waiting[frame.streamID] else { return }
            entry.1.resetCode = code
            waiting[frame.streamID] = entry
            finish(frame.streamID)
        default:
            break
        }
    }

    private func finish(_ id: HTTP2StreamID) {
        guard let (promise, response) = waiting.removeValue(forKey: id) else { return }
        promise.succeed(response)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(H2TestClient.Failure(description: "connection closed"))
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(H2TestClient.Failure(description: "connection closed"))
        context.fireChannelInactive()
    }

    private func failAll(_ error: any Error) {
        if !settingsDone {
            settingsDone = true
            settingsReceived?.fail(error)
        }
        let all = waiting
        waiting = [:]
        for (_, (promise, _)) in all { promise.fail(error) }
    }
}
