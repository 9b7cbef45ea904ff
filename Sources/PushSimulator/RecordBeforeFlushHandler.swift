import NIOCore

/// Sits between TLS and HTTP/2 when notifications are recorded to a file (`--record`): before any flush goes
/// down to the socket, it writes the record lines of the notifications accepted so far. A client that holds a
/// 200 then finds its notification in the file — tests read it as soon as a `pushctl` process exits. Answers are
/// flushed by ``SimulatorConnectionHandler`` but also by NIOHTTP2Handler itself (acknowledging the client's SETTINGS
/// or PING flushes whatever is queued), so the order is kept here, where every flush passes.
final class RecordBeforeFlushHandler: ChannelOutboundHandler {
    typealias OutboundIn = IOData

    private let recorder: SimulatorRecorder

    init(recorder: SimulatorRecorder) {
        self.recorder = recorder
    }

    func flush(context: ChannelHandlerContext) {
        recorder.flush()
        context.flush()
    }
}
