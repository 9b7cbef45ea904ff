import CCurl
import Glibc
import PushCore
import PushLanes

/// A libcurl failure (connect, TLS, HTTP/2 framing, timeout, …) with curl's code and message.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// curl's `CURLcode`/`CURLMcode` value, or a negative code for failures found by PushSender itself.
    public let code: Int
    /// curl's error text (from `CURLOPT_ERRORBUFFER` when available).
    public let message: String

    /// The proxy's answer to `CONNECT` when it refused the tunnel (e.g. 407), else nil.
    public var proxyStatus: Int?

    /// Creates an error.
    public init(code: Int, message: String, proxyStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.proxyStatus = proxyStatus
    }

    /// `code: message`.
    public var description: String { "curl error \(code): \(message)" }

    /// The server did not negotiate HTTP/2 (APNs requires it).
    public static func notHTTP2(_ detail: String) -> TransportError { TransportError(code: -2, message: detail) }

    /// The endpoint was stopped before this request was sent.
    public static func endpointStopped(_ detail: String) -> TransportError { TransportError(code: -3, message: detail) }

    /// The host resolved to an address the sender must not connect to (``AddressCheck``); nothing was sent.
    public static func addressRefused(_ detail: String) -> TransportError { TransportError(code: -4, message: detail) }

    /// The request went unanswered for the request timeout after it was sent (``Transport``'s own deadline),
    /// or the connect timeout fired.
    public var isTimeout: Bool { code == Int(CURLE_OPERATION_TIMEDOUT.rawValue) }

    /// Local TLS problems and verification of the server: never transient.
    private static let refusedCodes: [CURLcode] = [
        CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CIPHER,
        CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
        CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT,
    ]

    /// How the sender must treat a transfer that ended with this error. `sent` is false when the request
    /// never reached a connection (libcurl's pre-transfer point).
    ///
    /// The codes decide, not the text, with one exception: OpenSSL reports a TLS alert the server sent (it
    /// refused our client certificate: `alert unknown ca`, `alert bad certificate`, `alert certificate
    /// required`, …) inside the message of a connect or receive error, and only its text names it.
    func failure(sent: Bool) -> TransportFailure {
        if code == TransportError.notHTTP2("").code || code == TransportError.endpointStopped("").code
            || code == TransportError.addressRefused("").code
        {
            return .refused
        }
        if Self.refusedCodes.contains(where: { Int($0.rawValue) == code }) { return .refused }
        // The proxy wants credentials (407; some, like tinyproxy, answer 401 to wrong ones) or forbids the tunnel
        // (403): waiting will not change that. Its other refusals (502, 503, 504: it cannot reach APNs) are an
        // outage like any other.
        if let status = proxyStatus, [401, 403, 407].contains(status) { return .refused }
        if message.contains(" alert ") { return .refused }
        // An OpenSSL error on a connection's reads or writes ("SSL_write() error: …bad write retry" when the server
        // vanished mid-write, as a restarted APNs does) is the connection dying, not the peer refusing us: a refusal
        // arrives as an alert (above) or fails the handshake's verification (below).
        if message.contains("SSL_write()") || message.contains("SSL_read()") { return sent ? .dropped : .unreachable }
        if code == Int(CURLE_SSL_CONNECT_ERROR.rawValue), message.contains("error:"), !message.contains("unexpected eof") {
            // libcurl quotes OpenSSL's error queue ("error:0A000086:SSL routines::…") when the TLS layer itself
            // failed (e.g. a server certificate that does not verify against the trust anchor); a handshake cut
            // short by the network (reset, EOF) leaves the queue empty and names the socket error instead.
            return .refused
        }
        return sent ? .dropped : .unreachable
    }
}

/// What a transfer that ended without an HTTP answer means (see ``TransportError/failure(sent:)``).
enum TransportFailure: Equatable {
    /// The TLS peer or the configuration refused: untrusted server, hostname mismatch, our certificate
    /// rejected, no HTTP/2. Never transient: the endpoint stops and the run is interrupted.
    case refused
    /// Never sent over a working connection (DNS, refused or reset TCP, a TLS handshake cut short, a connect
    /// timeout): APNs cannot have processed it, and the endpoint is unreachable.
    case unreachable
    /// Sent on a connection that then died (reset, GOAWAY, stream error) or timed out without an answer: APNs
    /// may have processed it. Streams above a GOAWAY's last-stream-id or refused with REFUSED_STREAM never get
    /// here: nghttp2 classifies them from the frame and libcurl resends them on a new connection.
    case dropped
}
