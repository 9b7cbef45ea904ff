import NIOCore

/// The handshake-reset fault (``SimulatorFaults/resetHandshakes``): reads the client's first TLS bytes (the
/// ClientHello), then resets the TCP connection (RST) instead of answering.
final class HandshakeResetHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let core: SimulatorCore
    private var done = false

    init(core: SimulatorCore) { self.core = core }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        done = true
        core.recorder.count { $0.handshakeResets += 1 }
        // SO_LINGER 0: close() sends a TCP RST instead of a FIN.
        if let provider = context.channel as? SocketOptionProvider {
            _ = provider.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0))
        }
        context.close(promise: nil)
    }
}
