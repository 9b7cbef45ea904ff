import CCurl
import Glibc
import PushCore
import PushLanes

/// Counts the TCP connections one transport's handles open (libcurl's socket-options callback runs for each
/// new socket, on the transport thread) and close (libcurl's close-socket callback: ``Transport``'s new-connection
/// gate learns from it that a connection is gone, also one that died idle between two transfers).
final class ConnectionCounter {
    /// Sockets opened so far.
    var opened = 0
    /// Sockets libcurl closed so far (a connection ended, or a connect attempt failed): `opened - closed` are open.
    var closed = 0
    /// Sockets open now.
    var open: Int { opened - closed }
    /// The sender's figures, told of each connection.
    var metrics: SenderMetrics?
}

/// The transfers of one transport in the order their requests went on the wire (libcurl's pre-request
/// callback appends, on the transport thread): the request timeout runs from that moment, so the oldest one is
/// always the next to expire and checking deadlines costs O(1) per request. A transfer that waits for a stream or a
/// connection slot is not in it, and never times out.
final class SentTransfers {
    private var queue = FIFO<(handle: EasyHandle, sentAtMs: Int64)>()

    func append(_ handle: EasyHandle, at ms: Int64) { queue.append((handle, ms)) }

    /// The oldest request sent, if any. Its transfer may have finished since, or been sent again: it is still
    /// the same request only while the handle's ``EasyHandle/sentAtMs`` is `sentAtMs` and it carries a job.
    var first: (handle: EasyHandle, sentAtMs: Int64)? { queue.first }

    func removeFirst() { queue.popFirst() }
}

/// Monotonic milliseconds (CLOCK_MONOTONIC): request deadlines.
func monotonicMs() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}

/// The options every easy handle of one endpoint shares.
struct EasyOptions {
    /// Shared by the transport's handles.
    var connections = ConnectionCounter()
    /// Shared by the transport's handles: who is on the wire since when.
    var sent = SentTransfers()
    var connectTimeoutMs: Int
    /// Enforced by ``Transport`` from the moment the request is sent (``SentTransfers``), not by libcurl:
    /// `CURLOPT_TIMEOUT_MS` also counts the time a transfer waits in libcurl for a stream or a connection.
    var requestTimeoutMs: Int
    var upkeepIntervalMs: Int
    var caFile: String?
    var identity: TLSIdentity?
    /// `host:port:address:port` for `CURLOPT_CONNECT_TO`.
    var connectTo: String?
    var verbose = false
    /// Straight to the host or through which proxy (``ProxyRoute``).
    var route: ProxyRoute = .direct
    /// HTTP/1.1 only (no ALPN h2): a push service that must not be spoken to in HTTP/2, and tests.
    var http1Only = false
    /// Judges every address libcurl is about to connect to on a ``ProxyRoute/direct`` route; nil connects to any.
    /// Through a proxy libcurl connects only to the proxy, which the operator chose: nothing to judge.
    var addressCheck: AddressCheck?
    /// The service's id headers (``RequestShape/idHeaders``); nil writes and reads none.
    var idHeaders: IdHeaders?
}

/// Judges the addresses a host resolved to, before libcurl connects (`CURLOPT_OPENSOCKETFUNCTION`): the reason to
/// refuse one, or nil. Called on the transport thread.
final class AddressCheck: Sendable {
    let refusal: @Sendable (IPAddress) -> String?

    init(_ refusal: @escaping @Sendable (IPAddress) -> String?) { self.refusal = refusal }

    /// Why not to connect to the address libcurl is about to open a socket to, or nil (what both libcurl
    /// open-socket callbacks ask: the transport's and ``BlockingRequest``'s).
    func refusal(of address: UnsafeMutablePointer<curl_sockaddr>) -> String? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = Int(pp_curl_sockaddr_bytes(address, &bytes))
        guard let ip = IPAddress(bytes: Array(bytes.prefix(count))) else { return "an address of an unknown family" }
        return refusal(ip)
    }
}
