import NIOCore

extension SimulatorConnectionHandler {
    /// A held read that brings fewer complete requests than this (but some) did not pay for itself: the client
    /// waits for its answers (one request at a time, or a small window) rather than streaming.
    static let pacingMinimumYield = 8
    /// Held reads that bring this many requests or more, ``pacingPoorHoldsToStop`` in a row, end pacing: the
    /// client batches well on its own.
    static let pacingMaximumYield = 64
    /// This many held reads in a row each delivering fewer than ``pacingMinimumYield`` requests (or
    /// ``pacingMaximumYield`` or more) end pacing.
    static let pacingPoorHoldsToStop = 3
    /// After pacing ended, this many reads go through unpaced before it may start again.
    static let pacingBackoffReads = 1024

    /// Paces the connection's socket reads while the client streams requests faster than they are read.
    ///
    /// libcurl (7.88, and 8.x less so) writes every HTTP/2 frame as its own TLS record and write, so a simulator
    /// that reads as soon as anything arrives wakes up, reads, decrypts, answers and flushes for every frame or
    /// two: most of its CPU per request went to those wake-ups (serving curl_ceiling: ~1.5 reads, 0.65 writes
    /// and 0.4 context switches per request). While pacing, the next read is asked for no sooner than
    /// ``readPacing`` after the previous one, so the client's frames pile up in the socket and one wake-up
    /// serves many requests. Nothing is dropped or reordered, and every request read is answered at once.
    ///
    /// Pacing starts when a read brought a few requests (fewer than ``pacingMinimumYield``) less than
    /// ``readPacing`` after the previous read (the client trickles them in) — never before the first request,
    /// so the TLS handshake and the connection preface are not held. A held read that brings some requests
    /// but fewer than ``pacingMinimumYield`` did not pay for itself (the client waits for its answers: one
    /// request at a time, or a small window); ``pacingPoorHoldsToStop`` of those in a row stop pacing, and the
    /// next ``pacingBackoffReads`` reads are not held, so such a client pays a few holds per that many
    /// requests. A held read that brings nothing cost the client nothing and counts neither way. As many held reads
    /// in a row that bring ``pacingMaximumYield`` requests or more end pacing too: that client batches well by itself
    /// (h2load `-m 100`), and holding its reads would only cap it at its window per ``readPacing``.
    func read(context: ChannelHandlerContext) {
        if heldRead != nil { return }
        let served = requestsSinceRead
        requestsSinceRead = 0
        guard readPacing > .zero else {
            context.read()
            return
        }
        if lastReadWasHeld {
            lastReadWasHeld = false
            if served >= Self.pacingMaximumYield {
                // The client sends in big batches of its own (h2load packs a hundred requests into a few
                // records): unpaced reads are cheap enough, and a client with a bounded window would only be
                // held back. One big batch alone is no sign (curl_ceiling adds its requests a hundred at a time).
                poorHolds = 0
                bigHolds += 1
                if bigHolds >= Self.pacingPoorHoldsToStop {
                    bigHolds = 0
                    pacing = false
                    unpacedReads = Self.pacingBackoffReads
                }
            } else if served >= Self.pacingMinimumYield {
                poorHolds = 0
                bigHolds = 0
            } else if served == 0 {
                // Nothing came while the read was held: the hold cost the client nothing.
            } else if poorHolds + 1 < Self.pacingPoorHoldsToStop {
                bigHolds = 0
                poorHolds += 1
            } else {
                poorHolds = 0
                bigHolds = 0
                pacing = false
                unpacedReads = Self.pacingBackoffReads
            }
        }
        let now = NIODeadline.now()
        let due = lastReadAt + readPacing
        if unpacedReads > 0 {
            unpacedReads -= 1
        } else if !pacing, served > 0, served < Self.pacingMinimumYield, now < due {
            pacing = true
        }
        if pacing, now < due {
            lastReadWasHeld = true
            core.recorder.count { $0.heldReads += 1 }
            heldRead = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) {
                self.heldRead = nil
                self.lastReadAt = .now()
                context.read()
            }
            return
        }
        lastReadAt = now
        context.read()
    }
}
