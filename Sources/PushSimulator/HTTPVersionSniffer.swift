import NIOCore

/// Sits above TLS until a connection's first bytes show its HTTP version, then puts that version's handlers in its
/// place: HTTP/2 for a client that starts with the HTTP/2 connection preface (whatever ALPN said: clients such as
/// aioapns offer none and speak h2 by prior knowledge), HTTP/1.1 for anything else (Web Push senders such as
/// pywebpush). Decided by the bytes, not ALPN, so both kinds of client work without it.
final class HTTPVersionSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// RFC 9113 §3.4.
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private var buffered: ByteBuffer?
    private let http2: (ChannelPipeline.SynchronousOperations) throws -> Void
    private let http1: (ChannelPipeline.SynchronousOperations) throws -> Void

    /// `http2` and `http1` add their version's handlers at the end of the pipeline.
    init(
        http2: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void,
        http1: @escaping (ChannelPipeline.SynchronousOperations) throws -> Void
    ) {
        self.http2 = http2
        self.http1 = http1
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if var held = buffered {
            held.writeBuffer(&incoming)
            buffered = held
        } else {
            buffered = incoming
        }
        guard let bytes = buffered else { return }
        let seen = bytes.readableBytesView.prefix(Self.preface.count)
        let isHTTP2 = seen.elementsEqual(Self.preface.prefix(seen.count))
        // Undecided while the bytes so far are a prefix of the preface.
        if isHTTP2, seen.count < Self.preface.count { return }
        do {
            let sync = context.pipeline.syncOperations
            try isHTTP2 ? http2(sync) : http1(sync)
        } catch {
            context.close(promise: nil)
            return
        }
        buffered = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
