import CCurl
import Glibc
import PushCore
import PushLanes

/// A `CURLM*` multiplexing transfers over HTTP/2 connections, driven by `curl_multi_socket_action` from an epoll
/// set of its own (libcurl tells which sockets to watch, `CURLMOPT_SOCKETFUNCTION`, and when to call it back,
/// `CURLMOPT_TIMERFUNCTION`): each wake-up acts on the sockets and the timer that fired instead of visiting every
/// transfer, which is what `curl_multi_perform` does — its cost grew with the transfers in flight. An eventfd in
/// the set wakes the loop from other threads. Used from the transport thread only (``wakeup()`` excepted).
final class MultiHandle {
    let raw: UnsafeMutableRawPointer
    private let epoll: Int32
    private let wakeFd: Int32
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` (``monotonicMs()``); nil: no timer.
    fileprivate var timerDueMs: Int64?
    private let readyFds = UnsafeMutablePointer<Int32>.allocate(capacity: 64)
    private let readyMasks = UnsafeMutablePointer<Int32>.allocate(capacity: 64)
    /// Kept until `curl_multi_cleanup` has run: the handles' close-socket callback counts into it while libcurl
    /// closes the cached connections (``ConnectionCounter``).
    var keepAlive: AnyObject?

    init(maxConcurrentStreams: Int, maxHostConnections: Int) throws(TransportError) {
        _ = CurlGlobal.initialized
        guard let raw = curl_multi_init() else { throw TransportError(code: -1, message: "curl_multi_init failed") }
        self.raw = raw
        epoll = pp_epoll_create()
        wakeFd = pp_eventfd_create()
        guard epoll >= 0, wakeFd >= 0, pp_epoll_add_reader(epoll, wakeFd) == 0 else {
            throw TransportError(code: -1, message: "epoll/eventfd: errno \(errno)")
        }
        try check(pp_curl_multi_setopt_long(raw, CURLMOPT_PIPELINING, pp_curlpipe_multiplex()), "PIPELINING")
        try check(pp_curl_multi_setopt_long(raw, CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams), "MAX_CONCURRENT_STREAMS")
        try check(pp_curl_multi_setopt_long(raw, CURLMOPT_MAX_HOST_CONNECTIONS, maxHostConnections), "MAX_HOST_CONNECTIONS")
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(pp_curl_multi_setopt_socket_callback(raw, multiSocketCallback), "SOCKETFUNCTION")
        try check(pp_curl_multi_setopt_pointer(raw, CURLMOPT_SOCKETDATA, me), "SOCKETDATA")
        try check(pp_curl_multi_setopt_timer_callback(raw, multiTimerCallback), "TIMERFUNCTION")
        try check(pp_curl_multi_setopt_pointer(raw, CURLMOPT_TIMERDATA, me), "TIMERDATA")
    }

    deinit {
        // libcurl may still tell of sockets while it cleans up: not to this object any more.
        _ = pp_curl_multi_setopt_socket_callback(raw, nil)
        _ = pp_curl_multi_setopt_timer_callback(raw, nil)
        curl_multi_cleanup(raw)
        if epoll >= 0 { close(epoll) }
        if wakeFd >= 0 { close(wakeFd) }
        readyFds.deallocate()
        readyMasks.deallocate()
    }

    /// Changes `CURLMOPT_MAX_HOST_CONNECTIONS` (libcurl reads it whenever a transfer looks for a connection).
    func setMaxHostConnections(_ n: Int) {
        _ = pp_curl_multi_setopt_long(raw, CURLMOPT_MAX_HOST_CONNECTIONS, n)
    }

    func add(_ easy: EasyHandle) throws(TransportError) { try check(curl_multi_add_handle(raw, easy.raw), "add_handle") }

    func remove(_ easy: EasyHandle) { _ = curl_multi_remove_handle(raw, easy.raw) }

    /// Waits at most `maxMs` (less when libcurl's timer or a held read is due sooner) for socket activity or
    /// ``wakeup()``, then lets libcurl act on what fired: the ready sockets, the held reads that are due, then its
    /// timer if due. With `holdReadsMs` > 0 a socket that is only readable is held for that long instead
    /// (``ReadCadence``): its read interest is taken out of the epoll set meanwhile (level-triggered, it would fire
    /// again at once) and put back when the hold ends, when the socket reports anything else (writable, an error,
    /// hang-up), or when libcurl changes its wish for it. True when a readable socket went to libcurl.
    func wait(maxMs: Int, holdReadsMs: Int) -> Bool {
        var timeout = max(0, maxMs)
        let before = monotonicMs()
        if let due = timerDueMs { timeout = max(0, min(timeout, Int(clamping: due - before))) }
        for (_, until) in held { timeout = max(0, min(timeout, Int(clamping: until - before))) }
        let n = Int(pp_epoll_wait(epoll, readyFds, readyMasks, 64, Int32(clamping: timeout)))
        var running: Int32 = 0
        var read = false
        let now = held.isEmpty && holdReadsMs == 0 ? 0 : monotonicMs()
        for i in 0..<n {
            let fd = readyFds[i]
            var mask = readyMasks[i]
            if fd == wakeFd {
                pp_eventfd_drain(wakeFd)
                continue
            }
            if held[fd] != nil {
                // Writable or failed while its read was held: libcurl gets it all now.
                release(fd)
                mask |= CURL_CSELECT_IN
            } else if holdReadsMs > 0, mask == CURL_CSELECT_IN {
                held[fd] = now + Int64(holdReadsMs)
                _ = pp_epoll_watch(epoll, fd, (wishes[fd] ?? CURL_POLL_IN) & ~CURL_POLL_IN)
                continue
            }
            if mask & CURL_CSELECT_IN != 0 { read = true }
            _ = curl_multi_socket_action(raw, fd, mask, &running)
        }
        if !held.isEmpty {
            for (fd, until) in held where until <= now {
                release(fd)
                read = true
                _ = curl_multi_socket_action(raw, fd, CURL_CSELECT_IN, &running)
            }
        }
        if let due = timerDueMs, due <= monotonicMs() {
            timerDueMs = nil
            _ = curl_multi_socket_action(raw, pp_curl_socket_timeout(), 0, &running)
        }
        return read
    }

    /// Sockets whose readable event is held (``wait(maxMs:holdReadsMs:)``), with when the hold ends (``monotonicMs()``).
    private var held: [Int32: Int64] = [:]
    /// What libcurl last asked of each socket it watches (`CURL_POLL_IN`/`OUT`/`INOUT`), to put back after a hold.
    private var wishes: [Int32: Int32] = [:]

    /// Ends `fd`'s hold: its read interest back in the epoll set.
    private func release(_ fd: Int32) {
        held[fd] = nil
        if let wish = wishes[fd] { _ = pp_epoll_watch(epoll, fd, wish) }
    }

    /// Interrupts ``wait(maxMs:)`` from another thread.
    func wakeup() { pp_eventfd_signal(wakeFd) }

    /// `CURLMOPT_SOCKETFUNCTION`: libcurl's wish for one socket. A held socket keeps its read interest out until
    /// its hold ends; a socket libcurl stops watching ends its hold.
    fileprivate func watch(_ fd: Int32, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            wishes[fd] = nil
            held[fd] = nil
            _ = pp_epoll_watch(epoll, fd, what)
            return
        }
        wishes[fd] = what
        _ = pp_epoll_watch(epoll, fd, held[fd] == nil ? what : what & ~CURL_POLL_IN)
    }

    /// The next finished transfer and its error (nil on success), or nil when none is ready.
    func nextDone() -> (EasyHandle, TransportError?)? {
        var easy: UnsafeMutableRawPointer?
        var code = CURLE_OK
        guard pp_curl_multi_next_done(raw, &easy, &code) == 1, let easy else { return nil }
        var priv: UnsafeMutableRawPointer?
        _ = pp_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &priv)
        guard let priv else { return nil }
        let handle = Unmanaged<EasyHandle>.fromOpaque(priv).takeUnretainedValue()
        return (handle, handle.error(for: code))
    }
}

/// `CURLMOPT_SOCKETFUNCTION` (see ``MultiHandle``).
private let multiSocketCallback: @convention(c) (
    UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
) -> Int32 = { _, fd, what, user, _ in
    if let user { Unmanaged<MultiHandle>.fromOpaque(user).takeUnretainedValue().watch(fd, what) }
    return 0
}

/// `CURLMOPT_TIMERFUNCTION`: when libcurl wants to be called back (-1: no timer). It must not call libcurl here.
private let multiTimerCallback: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
    _, timeoutMs, user in
    guard let user else { return 0 }
    let multi = Unmanaged<MultiHandle>.fromOpaque(user).takeUnretainedValue()
    multi.timerDueMs = timeoutMs < 0 ? nil : monotonicMs() + Int64(timeoutMs)
    return 0
}
