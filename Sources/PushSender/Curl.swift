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

/// Throws ``TransportError`` for a failed easy-interface call.
@inline(__always)
func check(_ code: CURLcode, _ what: @autoclosure () -> String) throws(TransportError) {
    guard code != CURLE_OK else { return }
    throw TransportError(code: Int(code.rawValue), message: "\(what()): " + String(cString: curl_easy_strerror(code)))
}

/// Throws ``TransportError`` for a failed multi-interface call.
@inline(__always)
func check(_ code: CURLMcode, _ what: @autoclosure () -> String) throws(TransportError) {
    guard code != CURLM_OK else { return }
    throw TransportError(code: Int(code.rawValue), message: "\(what()): " + String(cString: curl_multi_strerror(code)))
}

/// `curl_global_init` exactly once per process (Swift runs a static initializer once, thread-safely).
/// TLS for a handle: verification always on (a configured CA file only adds trust anchors) and, for certificate
/// credentials, the client certificate and key. The caller keeps `identity` alive as long as the handle: libcurl
/// holds a pointer to its decoded form, installed into each new connection's `SSL_CTX` by
/// ``installIdentityCallback``; a libcurl without that hook (not built on OpenSSL) gets PEM copies instead.
func setTLSOptions(_ raw: UnsafeMutableRawPointer, caFile: String?, identity: TLSIdentity?) throws(TransportError) {
    try check(pp_curl_easy_setopt_long(raw, CURLOPT_SSL_VERIFYPEER, 1), "VERIFYPEER")
    try check(pp_curl_easy_setopt_long(raw, CURLOPT_SSL_VERIFYHOST, 2), "VERIFYHOST")
    if let caFile { try check(pp_curl_easy_setopt_string(raw, CURLOPT_CAINFO, caFile), "CAINFO") }
    if let identity {
        if let decoded = identity.decoded,
           pp_curl_easy_setopt_ssl_ctx_callback(raw, installIdentityCallback) == CURLE_OK {
            let data = Unmanaged.passUnretained(decoded).toOpaque()
            try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_SSL_CTX_DATA, data), "SSL_CTX_DATA")
            return
        }
        try setBlob(raw, CURLOPT_SSLCERT_BLOB, identity.certificatePEM, "SSLCERT_BLOB")
        try setBlob(raw, CURLOPT_SSLKEY_BLOB, identity.privateKeyPEM, "SSLKEY_BLOB")
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_SSLCERTTYPE, "PEM"), "SSLCERTTYPE")
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_SSLKEYTYPE, "PEM"), "SSLKEYTYPE")
    }
}

/// `CURLOPT_SSL_CTX_FUNCTION`: presents the client identity (`CURLOPT_SSL_CTX_DATA`, an unretained
/// `OpenSSLIdentity`) on a new connection. A refusal fails the transfer with `CURLE_SSL_CERTPROBLEM`.
private let installIdentityCallback: @convention(c) (
    UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
) -> CURLcode = { _, sslContext, data in
    guard let sslContext, let data else { return CURLE_SSL_CERTPROBLEM }
    let identity = Unmanaged<OpenSSLIdentity>.fromOpaque(data).takeUnretainedValue()
    return identity.install(into: sslContext) ? CURLE_OK : CURLE_SSL_CERTPROBLEM
}

/// Gives libcurl the route ``ProxyRoute`` decided, so it never reads the proxy variables itself: an empty
/// `CURLOPT_PROXY` means no proxy whatever the environment says, and an empty `CURLOPT_NOPROXY` keeps `NO_PROXY`
/// from overriding a proxy we chose. A configured proxy is an HTTP proxy tunnelling HTTPS with CONNECT (TLS and
/// its verification stay end to end); an environment's proxy URL is given as written (libcurl reads its scheme
/// and any credentials in it, as it would from the variable).
func setRouteOptions(_ raw: UnsafeMutableRawPointer, _ route: ProxyRoute) throws(TransportError) {
    try check(pp_curl_easy_setopt_string(raw, CURLOPT_NOPROXY, ""), "NOPROXY")
    switch route {
    case .direct:
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_PROXY, ""), "PROXY")
    case .environment(let proxy):
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_PROXY, proxy.url), "PROXY")
    case .configured(let proxy):
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_PROXY, proxy.url), "PROXY")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_PROXYTYPE, Int(CURLPROXY_HTTP.rawValue)), "PROXYTYPE")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_HTTPPROXYTUNNEL, 1), "HTTPPROXYTUNNEL")
        if let user = proxy.username, let password = proxy.password {
            try check(pp_curl_easy_setopt_string(raw, CURLOPT_PROXYUSERNAME, user), "PROXYUSERNAME")
            try check(pp_curl_easy_setopt_string(raw, CURLOPT_PROXYPASSWORD, password), "PROXYPASSWORD")
        }
    }
}

/// Sets a blob option from a copy of `bytes` (`CURL_BLOB_COPY`: libcurl keeps its own).
private func setBlob(_ raw: UnsafeMutableRawPointer, _ option: CURLoption, _ bytes: [UInt8], _ what: String) throws(TransportError) {
    var copy = bytes
    let code = copy.withUnsafeMutableBytes { buf in
        var blob = curl_blob(data: buf.baseAddress, len: buf.count, flags: pp_curl_blob_copy())
        return pp_curl_easy_setopt_blob(raw, option, &blob)
    }
    try check(code, what)
}

enum CurlGlobal {
    static let initialized: Bool = curl_global_init(pp_curl_global_all()) == CURLE_OK
}

/// Counts the TCP connections one transport's handles open (libcurl's socket-options callback runs for each
/// new socket, on the transport thread).
final class ConnectionCounter {
    /// Sockets opened so far.
    var opened = 0
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
}

/// Judges the addresses a host resolved to, before libcurl connects (`CURLOPT_OPENSOCKETFUNCTION`): the reason to
/// refuse one, or nil. Called on the transport thread.
final class AddressCheck: Sendable {
    let refusal: @Sendable (IPAddress) -> String?

    init(_ refusal: @escaping @Sendable (IPAddress) -> String?) { self.refusal = refusal }
}

/// One reusable `CURL*`: set up once, then re-armed per request (curl keeps the connection in the multi).
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headers: HeaderList?
    private var connectTo: HeaderList?
    /// This handle's `apns-id: …` header line: a list node of our own, chained in front of the shared headers
    /// of each request (curl only reads the list), so arming a request allocates no header memory.
    private let idNode: UnsafeMutablePointer<curl_slist>
    private let idLine = CLine(capacity: 64)
    /// The URL of an APNs request, written here from the endpoint's prefix and the token (libcurl copies it): a
    /// `String` joined per request, then copied into a C array for the call, cost ~500 instructions (callgrind).
    private let urlLine = CLine(capacity: 128)
    /// The apns-id of the current request.
    private var requestId = ""
    /// Response body bytes (APNs sends a small JSON object on errors only).
    var body: [UInt8] = []
    /// `apns-id` response header.
    var apnsId: String?
    /// `apns-unique-id` response header (development environment only).
    var uniqueId: String?
    /// `retry-after` response header, parsed where it arrives (no copy of it kept); nil when absent or malformed.
    var retryAfter: RetryAfter?
    /// The transfer currently carried by this handle (owned by the transport).
    var job: TransferJob?
    private let options: EasyOptions
    /// Connections the transport had opened when the current transfer started.
    private var connectionsAtStart = 0
    /// When the current request went on the wire (``monotonicMs()``), 0 while it waits for a stream.
    private(set) var sentAtMs: Int64 = 0
    /// Why ``EasyOptions/addressCheck`` refused the address of the current transfer's connection, if it did.
    fileprivate(set) var refusedAddress: String?

    init(_ options: EasyOptions) throws(TransportError) {
        _ = CurlGlobal.initialized
        guard let raw = curl_easy_init() else { throw TransportError(code: -1, message: "curl_easy_init failed") }
        self.raw = raw
        self.options = options
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        idNode = .allocate(capacity: 1)
        idNode.initialize(to: curl_slist(data: idLine.pointer, next: nil))
        try configure()
    }

    /// Sets every option that stays the same from request to request.
    private func configure() throws(TransportError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_PIPEWAIT, 1), "PIPEWAIT")
        // APNs answers are a few hundred bytes; curl's default 16 KB receive buffer per handle would cost
        // ~16 MB for a 1,000-notification window. Payloads are at most 5 KB: the upload buffer gets curl's
        // minimum (16 KB instead of 64 KB; ~3.4 MB less resident at 1,000 handles, measured).
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_BUFFERSIZE, 1024), "BUFFERSIZE")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_UPLOAD_BUFFERSIZE, 16384), "UPLOAD_BUFFERSIZE")
        let version = options.http1Only ? Int(CURL_HTTP_VERSION_1_1) : Int(CURL_HTTP_VERSION_2TLS)
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_HTTP_VERSION, version), "HTTP_VERSION")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeoutMs), "CONNECTTIMEOUT")
        if options.addressCheck != nil, options.route.isDirect {
            try check(pp_curl_easy_setopt_opensocket_callback(raw, easyOpenSocketCallback), "OPENSOCKETFUNCTION")
            try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_OPENSOCKETDATA, me), "OPENSOCKETDATA")
        }
        // No CURLOPT_TIMEOUT_MS: libcurl counts it from curl_multi_add_handle, so a transfer waiting for a stream
        // under a low SETTINGS_MAX_CONCURRENT_STREAMS timed out without ever being sent ("Connection timed out after
        // 0 milliseconds"). The transport enforces the request timeout from the pre-request callback on.
        try check(pp_curl_easy_setopt_prereq_callback(raw, easyPrereqCallback), "PREREQFUNCTION")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_PREREQDATA, me), "PREREQDATA")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_UPKEEP_INTERVAL_MS, options.upkeepIntervalMs), "UPKEEP")
        try setTLSOptions(raw, caFile: options.caFile, identity: options.identity)
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_POST, 1), "POST")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_PRIVATE, me), "PRIVATE")
        try check(pp_curl_easy_setopt_write_callback(raw, easyWriteCallback), "WRITEFUNCTION")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_WRITEDATA, me), "WRITEDATA")
        try check(pp_curl_easy_setopt_header_callback(raw, easyHeaderCallback), "HEADERFUNCTION")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_HEADERDATA, me), "HEADERDATA")
        try check(pp_curl_easy_setopt_sockopt_callback(raw, easySocketCallback), "SOCKOPTFUNCTION")
        try check(
            pp_curl_easy_setopt_pointer(raw, CURLOPT_SOCKOPTDATA, Unmanaged.passUnretained(options.connections).toOpaque()),
            "SOCKOPTDATA")
        if let line = options.connectTo {
            let list = connectTo ?? HeaderList()
            if connectTo == nil { list.append(line) }
            connectTo = list
            try check(pp_curl_easy_setopt_slist(raw, CURLOPT_CONNECT_TO, list.raw), "CONNECT_TO")
        }
        try setRouteOptions(raw, options.route)
        if options.verbose { try check(pp_curl_easy_setopt_long(raw, CURLOPT_VERBOSE, 1), "VERBOSE") }
    }

    /// Before the handle goes back to the pool: if a connection was opened while its transfer ran (the old one
    /// died or sent GOAWAY), libcurl may have resent the transfer internally, and libcurl never lowers a
    /// handle's count of such resends (after five it fails every transfer with "Connection died"). A reset
    /// clears that state; the options are set again. False when the handle cannot be used any more.
    func renewIfConnectionsChanged() -> Bool {
        guard options.connections.opened != connectionsAtStart else { return true }
        return renew()
    }

    /// Resets every option and sets them again (a transfer removed before its end leaves state behind).
    func renew() -> Bool {
        curl_easy_reset(raw)
        do { try configure() } catch { return false }
        return true
    }

    /// The address judge of this handle's connections.
    fileprivate var addressCheck: AddressCheck? { options.addressCheck }

    /// The pre-request callback: the request goes on the wire now.
    fileprivate func markSent() {
        sentAtMs = monotonicMs()
        options.sent.append(self, at: sentAtMs)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
        idNode.deallocate()
    }

    /// Re-arms the handle for one POST to `url`: `apns-id: <apnsId>` (when given) followed by `headers` (shared by
    /// many requests and kept alive by the handle until its next request); curl copies the URL and the body.
    func prepare(url: String, apnsId requestId: String?, headers: HeaderList, body payload: [UInt8]) throws(TransportError) {
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, url), "URL")
        try prepare(apnsId: requestId, headers: headers, body: payload)
    }

    /// ``prepare(url:apnsId:headers:body:)`` for the URL `prefix` + `path` (an endpoint's `https://host/3/device/`
    /// and a token).
    func prepare(urlPrefix prefix: String, path: String, apnsId requestId: String?, headers: HeaderList, body payload: [UInt8])
        throws(TransportError)
    {
        var (prefix, path) = (prefix, path)
        prefix.withUTF8 { p in path.withUTF8 { urlLine.set(UnsafeRawBufferPointer(p), $0) } }
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, urlLine.pointer), "URL")
        try prepare(apnsId: requestId, headers: headers, body: payload)
    }

    private func prepare(apnsId requestId: String?, headers: HeaderList, body payload: [UInt8]) throws(TransportError) {
        connectionsAtStart = options.connections.opened
        sentAtMs = 0
        refusedAddress = nil
        body.removeAll(keepingCapacity: true)
        apnsId = nil
        uniqueId = nil
        retryAfter = nil
        errorBuffer[0] = 0
        if let requestId {
            self.requestId = requestId
            // curl is not reading the line: the handle carries no transfer while it is armed.
            var value = requestId
            value.withUTF8 { idLine.set(UnsafeRawBufferPointer(start: Self.idName.utf8Start, count: Self.idName.utf8CodeUnitCount), $0) }
            idNode.pointee.data = idLine.pointer
            idNode.pointee.next = headers.raw
            try check(pp_curl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, idNode), "HTTPHEADER")
        } else {
            try check(pp_curl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, headers.raw), "HTTPHEADER")
        }
        self.headers = headers
        try check(pp_curl_easy_setopt_off(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(payload.count)), "POSTFIELDSIZE")
        let code = payload.withUnsafeBufferPointer { buf in
            pp_curl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buf.baseAddress))
        }
        try check(code, "COPYPOSTFIELDS")
    }

    private static let idName: StaticString = "apns-id: "

    /// The HTTP status of the last response (0 when none arrived).
    var responseCode: Int {
        var v = 0
        _ = pp_curl_easy_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &v)
        return v
    }

    /// True when the last transfer used HTTP/2.
    var usedHTTP2: Bool {
        var v = 0
        _ = pp_curl_easy_getinfo_long(raw, CURLINFO_HTTP_VERSION, &v)
        return v == Int(CURL_HTTP_VERSION_2_0)
    }

    /// True once the last transfer got past connecting (libcurl's pre-transfer time is set per transfer):
    /// false means the request was never written to a connection.
    var reachedConnection: Bool {
        var v: curl_off_t = 0
        _ = pp_curl_easy_getinfo_off(raw, CURLINFO_PRETRANSFER_TIME_T, &v)
        return v > 0
    }

    /// Bytes of request body sent: > 0 means the server may have processed the request.
    var uploadedBytes: Int64 {
        var v: curl_off_t = 0
        _ = pp_curl_easy_getinfo_off(raw, CURLINFO_SIZE_UPLOAD_T, &v)
        return Int64(v)
    }

    /// The error for a finished transfer's code, preferring curl's detailed error buffer.
    func error(for code: CURLcode) -> TransportError? {
        guard code != CURLE_OK else { return nil }
        if let refusedAddress { return .addressRefused(refusedAddress) }
        var detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        // A handshake that failed on the server's certificate: libcurl quotes the oldest OpenSSL error, which can
        // be a step of the failed check ("asn1 encoding routines::EVP lib" for a signature that does not verify);
        // the verification result names the cause. Not when our own certificate or key was refused before any
        // handshake (CURLE_SSL_CERTPROBLEM): the result then still holds libcurl's "unspecified" starting value.
        // Nor when the connection timed out: the handshake never got to verifying, and the result still holds
        // libcurl's starting value (1, "unspecified", which OpenSSL also reports for a real failure, such as a
        // signature that does not verify).
        var verify = 0
        if code != CURLE_SSL_CERTPROBLEM, code != CURLE_OPERATION_TIMEDOUT,
            pp_curl_easy_getinfo_long(raw, CURLINFO_SSL_VERIFYRESULT, &verify) == CURLE_OK, verify != 0,
            !detail.contains("certificate problem")
        {
            detail += "; the server's certificate does not verify against the trusted CAs (\(x509VerificationErrorText(verify)))"
        }
        var connectCode = 0
        if pp_curl_easy_getinfo_long(raw, CURLINFO_HTTP_CONNECTCODE, &connectCode) == CURLE_OK, connectCode >= 300 {
            let proxy = options.route.description
            let hint = connectCode == 407 || connectCode == 401
                ? " (the proxy wants other credentials: check proxyCredentialsFile / proxyCredentialsEnv)" : ""
            return TransportError(
                code: Int(code.rawValue), message: "\(proxy) refused the CONNECT tunnel: HTTP \(connectCode)\(hint)",
                proxyStatus: connectCode)
        }
        return TransportError(code: Int(code.rawValue), message: detail)
    }

    /// Sends keep-alive PINGs on this handle's idle connection when the upkeep interval has passed.
    func upkeep() { _ = curl_easy_upkeep(raw) }

    fileprivate func appendHeader(_ line: UnsafeBufferPointer<UInt8>) {
        // Only `apns-…` and `retry-after` lines are read: the others (the status line, the blank end) are passed by
        // their first letter instead of being matched against each name (~600 instructions per answer, callgrind).
        guard let first = line.first, first | 0x20 == UInt8(ascii: "a") || first | 0x20 == UInt8(ascii: "r") else { return }
        if let v = Self.value(of: "apns-id:", in: line) {
            // APNs echoes the request's id: keep the request's string rather than allocating a copy. Compared as
            // bytes (memcmp): the generic `utf8.elementsEqual` cost ~1,900 instructions per answer (callgrind).
            apnsId = Self.bytesEqual(&requestId, v) ? requestId : String(decoding: v, as: UTF8.self)
        } else if let v = Self.value(of: "apns-unique-id:", in: line) {
            uniqueId = String(decoding: v, as: UTF8.self)
        } else if let v = Self.value(of: "retry-after:", in: line) {
            retryAfter = RetryAfter.parse(v)
        }
    }

    /// Whether `string`'s UTF-8 is `bytes` (`string` is native: `withUTF8` does not copy it).
    private static func bytesEqual(_ string: inout String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        string.withUTF8 { s in
            s.count == bytes.count && (s.count == 0 || memcmp(s.baseAddress!, bytes.baseAddress!, s.count) == 0)
        }
    }

    /// The trimmed value of header `name` (case-insensitive) in `line`, or nil for another header.
    private static func value(of name: StaticString, in line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let n = name.utf8CodeUnitCount
        guard line.count > n else { return nil }
        let p = name.utf8Start
        for i in 0..<n where line[i] | 0x20 != p[i] | 0x20 { return nil }
        var s = n, e = line.count
        while s < e, line[s] == 0x20 || line[s] == 0x09 { s += 1 }
        while e > s, line[e - 1] == 0x0d || line[e - 1] == 0x0a || line[e - 1] == 0x20 { e -= 1 }
        return UnsafeBufferPointer(rebasing: line[s..<e])
    }
}

private let easyWriteCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let handle = Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    // APNs error bodies are tiny; cap what we keep so a misbehaving server cannot grow memory.
    if handle.body.count < 16_384 {
        data.withMemoryRebound(to: UInt8.self, capacity: n) { handle.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
    }
    return n
}

/// `CURLOPT_PREREQFUNCTION`: the transfer has its connection and stream; its request is sent next.
private let easyPrereqCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32) -> Int32 = {
    user, _, _, _, _ in
    if let user { Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue().markSent() }
    return 0  // CURL_PREREQFUNC_OK
}

/// Opens a connection's socket unless ``EasyOptions/addressCheck`` refuses the address (then the transfer fails
/// before any byte is sent, with ``TransportError/addressRefused(_:)``).
private let easyOpenSocketCallback: @convention(c) (UnsafeMutableRawPointer?, curlsocktype, UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t = {
    user, _, address in
    guard let user, let address else { return pp_curl_socket_bad() }
    let handle = Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue()
    if let check = handle.addressCheck {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = Int(pp_curl_sockaddr_bytes(address, &bytes))
        guard let ip = IPAddress(bytes: Array(bytes.prefix(count))) else {
            handle.refusedAddress = "an address of an unknown family"
            return pp_curl_socket_bad()
        }
        if let reason = check.refusal(ip) {
            handle.refusedAddress = reason
            return pp_curl_socket_bad()
        }
    }
    return pp_curl_open_socket(address)
}

/// Counts new sockets (libcurl calls it once per connection it opens); leaves the socket as it is.
private let easySocketCallback: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, curlsocktype) -> Int32 = {
    counter, _, _ in
    if let counter {
        let connections = Unmanaged<ConnectionCounter>.fromOpaque(counter).takeUnretainedValue()
        connections.opened += 1
        connections.metrics?.connectionOpened(first: connections.opened == 1)
    }
    return 0  // CURL_SOCKOPT_OK
}

private let easyHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let handle = Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    data.withMemoryRebound(to: UInt8.self, capacity: n) { handle.appendHeader(UnsafeBufferPointer(start: $0, count: n)) }
    return n
}

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

    func add(_ easy: EasyHandle) throws(TransportError) { try check(curl_multi_add_handle(raw, easy.raw), "add_handle") }

    func remove(_ easy: EasyHandle) { _ = curl_multi_remove_handle(raw, easy.raw) }

    /// Waits at most `maxMs` (less when libcurl's timer is due sooner) for socket activity or ``wakeup()``, then
    /// lets libcurl act on what fired: the ready sockets, then its timer if due.
    func wait(maxMs: Int) {
        var timeout = max(0, maxMs)
        if let due = timerDueMs { timeout = max(0, min(timeout, Int(clamping: due - monotonicMs()))) }
        let n = Int(pp_epoll_wait(epoll, readyFds, readyMasks, 64, Int32(clamping: timeout)))
        var running: Int32 = 0
        for i in 0..<n {
            let fd = readyFds[i]
            if fd == wakeFd {
                pp_eventfd_drain(wakeFd)
            } else {
                _ = curl_multi_socket_action(raw, fd, readyMasks[i], &running)
            }
        }
        if let due = timerDueMs, due <= monotonicMs() {
            timerDueMs = nil
            _ = curl_multi_socket_action(raw, pp_curl_socket_timeout(), 0, &running)
        }
    }

    /// Interrupts ``wait(maxMs:)`` from another thread.
    func wakeup() { pp_eventfd_signal(wakeFd) }

    /// `CURLMOPT_SOCKETFUNCTION`: libcurl's wish for one socket.
    fileprivate func watch(_ fd: Int32, _ what: Int32) { _ = pp_epoll_watch(epoll, fd, what) }

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

/// A NUL-terminated line of our own that libcurl reads while a request is armed (or copies when it is set),
/// rewritten per request without allocating: it grows only when a longer line comes.
final class CLine {
    private(set) var pointer: UnsafeMutablePointer<CChar>
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        pointer = .allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
    }

    deinit { pointer.deallocate() }

    /// Makes the line `head` followed by `tail` (``pointer`` changes when it grows).
    func set(_ head: UnsafeRawBufferPointer, _ tail: UnsafeBufferPointer<UInt8>) {
        let n = head.count + tail.count
        if n + 1 > capacity {
            pointer.deallocate()
            capacity = n + 1
            pointer = .allocate(capacity: capacity)
        }
        let out = UnsafeMutableRawPointer(pointer)
        if let base = head.baseAddress { out.copyMemory(from: base, byteCount: head.count) }
        if let base = tail.baseAddress { (out + head.count).copyMemory(from: base, byteCount: tail.count) }
        pointer[n] = 0
    }
}

/// A `curl_slist` of request headers, freed when the last request using it is done. Appended to only while it is
/// built, before any request or other thread sees it (then libcurl only reads it).
final class HeaderList: @unchecked Sendable {
    private(set) var raw: UnsafeMutablePointer<curl_slist>?

    init(capacityHint: Int = 0) {}

    /// Appends `name: value`.
    func append(_ line: String) {
        if let next = curl_slist_append(raw, line) { raw = next }
    }

    deinit { curl_slist_free_all(raw) }
}

// MARK: - One blocking POST

/// One HTTP POST on its own easy handle, blocking the calling thread (webhooks run on their own thread):
/// TLS verified, redirects not followed, the response body discarded, bounded by `timeoutMs`.
final class BlockingPost {
    private let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let headers = HeaderList()

    init(url: String, headers lines: [String], body: [UInt8], timeoutMs: Int, caFile: String?) throws(TransportError) {
        _ = CurlGlobal.initialized
        guard let raw = curl_easy_init() else { throw TransportError(code: -1, message: "curl_easy_init failed") }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        for line in lines { headers.append(line) }
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, url), "URL")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_TIMEOUT_MS, timeoutMs), "TIMEOUT")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMs, 10_000)), "CONNECTTIMEOUT")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_SSL_VERIFYPEER, 1), "VERIFYPEER")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_SSL_VERIFYHOST, 2), "VERIFYHOST")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
        if let caFile { try check(pp_curl_easy_setopt_string(raw, CURLOPT_CAINFO, caFile), "CAINFO") }
        // A webhook's URL is the operator's: the environment's proxy rule, decided by us like every connection's.
        try setRouteOptions(raw, ProxyRoute(url: url, configured: nil, environment: .process))
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_POST, 1), "POST")
        try check(pp_curl_easy_setopt_off(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "POSTFIELDSIZE")
        // COPYPOSTFIELDS copies the bytes: the buffer need not outlive the call.
        let copied = body.withUnsafeBytes { bytes in
            pp_curl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        }
        try check(copied, "COPYPOSTFIELDS")
        try check(pp_curl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, headers.raw), "HTTPHEADER")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        try check(pp_curl_easy_setopt_write_callback(raw, discardCallback), "WRITEFUNCTION")
    }

    /// Sends it and returns the HTTP status.
    func perform() throws(TransportError) -> Int {
        errorBuffer[0] = 0
        let code = curl_easy_perform(raw)
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            throw TransportError(code: Int(code.rawValue), message: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        var status = 0
        _ = pp_curl_easy_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }
}

private let discardCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { _, size, count, _ in
    size * count
}

// MARK: - One blocking request with its answer

/// The answer to a ``BlockingRequest``: HTTP status, response headers (names lowercased, last value wins)
/// and body (at most 64 KB kept).
struct BlockingResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
}

/// One HTTP/2 request (GET, POST or DELETE) on its own easy handle, blocking the calling thread (run it on a
/// thread of its own, never on Swift's cooperative pool): TLS verified, an optional client certificate, an
/// optional proxy tunnel, redirects not followed; the response headers and body are kept.
final class BlockingRequest {
    private let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let headerList = HeaderList()
    private let connectTo = HeaderList()
    fileprivate var body: [UInt8] = []
    fileprivate var headers: [String: String] = [:]
    /// Kept as long as the handle: libcurl points at its decoded form (``setTLSOptions(_:caFile:identity:)``).
    private let identity: TLSIdentity?
    private let requireHTTP2: Bool

    /// - Parameters:
    ///   - method: `GET`, `POST` or `DELETE`; only POST sends `body`.
    ///   - connectTo: `host:port:address:port` for `CURLOPT_CONNECT_TO`, or nil.
    ///   - requireHTTP2: an answer over HTTP/1.1 is an error (APNs); false for endpoints that may speak either (an
    ///     OAuth token endpoint).
    init(
        method: String, url: String, headers lines: [String], body payload: [UInt8], timeoutMs: Int,
        connectTimeoutMs: Int, caFile: String?, identity: TLSIdentity?, connectTo line: String?, route: ProxyRoute,
        certificateInfo: Bool = false, requireHTTP2: Bool = true
    ) throws(TransportError) {
        _ = CurlGlobal.initialized
        guard let raw = curl_easy_init() else { throw TransportError(code: -1, message: "curl_easy_init failed") }
        self.raw = raw
        self.identity = identity
        self.requireHTTP2 = requireHTTP2
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        for l in lines { headerList.append(l) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, url), "URL")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP_VERSION")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_TIMEOUT_MS, timeoutMs), "TIMEOUT")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMs, connectTimeoutMs)), "CONNECTTIMEOUT")
        try check(pp_curl_easy_setopt_long(raw, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
        try setTLSOptions(raw, caFile: caFile, identity: identity)
        if let line {
            connectTo.append(line)
            try check(pp_curl_easy_setopt_slist(raw, CURLOPT_CONNECT_TO, connectTo.raw), "CONNECT_TO")
        }
        try setRouteOptions(raw, route)
        if certificateInfo { try check(pp_curl_easy_setopt_long(raw, CURLOPT_CERTINFO, 1), "CERTINFO") }
        switch method {
        case "POST":
            try check(pp_curl_easy_setopt_long(raw, CURLOPT_POST, 1), "POST")
            try check(pp_curl_easy_setopt_off(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(payload.count)), "POSTFIELDSIZE")
            let copied = payload.withUnsafeBytes { bytes in
                pp_curl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            }
            try check(copied, "COPYPOSTFIELDS")
        case "GET":
            try check(pp_curl_easy_setopt_long(raw, CURLOPT_HTTPGET, 1), "HTTPGET")
        default:
            try check(pp_curl_easy_setopt_long(raw, CURLOPT_HTTPGET, 1), "HTTPGET")
            try check(pp_curl_easy_setopt_string(raw, CURLOPT_CUSTOMREQUEST, method), "CUSTOMREQUEST")
        }
        try check(pp_curl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, headerList.raw), "HTTPHEADER")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        try check(pp_curl_easy_setopt_write_callback(raw, blockingWriteCallback), "WRITEFUNCTION")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_WRITEDATA, me), "WRITEDATA")
        try check(pp_curl_easy_setopt_header_callback(raw, blockingHeaderCallback), "HEADERFUNCTION")
        try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_HEADERDATA, me), "HEADERDATA")
    }

    /// Sends it and waits for the answer. A failure without an answer throws, with ``TransportError/failure(sent:)``
    /// telling whether the request reached a connection.
    func perform() throws(TransportError) -> BlockingResponse {
        errorBuffer[0] = 0
        body.removeAll()
        headers.removeAll()
        let code = curl_easy_perform(raw)
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            var connectCode = 0
            if pp_curl_easy_getinfo_long(raw, CURLINFO_HTTP_CONNECTCODE, &connectCode) == CURLE_OK, connectCode >= 300 {
                throw TransportError(
                    code: Int(code.rawValue), message: "the proxy refused the CONNECT tunnel: HTTP \(connectCode)",
                    proxyStatus: connectCode)
            }
            throw TransportError(code: Int(code.rawValue), message: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        var status = 0
        _ = pp_curl_easy_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = pp_curl_easy_getinfo_long(raw, CURLINFO_HTTP_VERSION, &version)
        guard version == Int(CURL_HTTP_VERSION_2_0) || !requireHTTP2 else {
            throw TransportError.notHTTP2("the server answered without HTTP/2 (APNs requires it)")
        }
        return BlockingResponse(status: status, headers: headers, body: body)
    }

    /// The certificates the server presented on the last transfer, leaf first, each as libcurl's `Name:value`
    /// lines (`Subject:…`, `Issuer:…`, …); empty unless made with `certificateInfo`, or when no TLS session was
    /// verified.
    var certificateChain: [[String]] {
        var pointer: UnsafeMutableRawPointer?
        guard pp_curl_easy_getinfo_pointer(raw, CURLINFO_CERTINFO, &pointer) == CURLE_OK, let pointer else { return [] }
        let info = pointer.assumingMemoryBound(to: curl_certinfo.self).pointee
        guard info.num_of_certs > 0, let lists = info.certinfo else { return [] }
        return (0..<Int(info.num_of_certs)).map { i in
            var lines: [String] = []
            var item = lists[i]
            while let node = item {
                if let data = node.pointee.data { lines.append(String(cString: data)) }
                item = node.pointee.next
            }
            return lines
        }
    }

    /// True once the last transfer got past connecting: false means the request never reached a connection.
    var reachedConnection: Bool {
        var v: curl_off_t = 0
        _ = pp_curl_easy_getinfo_off(raw, CURLINFO_PRETRANSFER_TIME_T, &v)
        return v > 0
    }

    fileprivate func appendHeader(_ line: UnsafeBufferPointer<UInt8>) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        var s = colon + 1, e = line.count
        while s < e, line[s] == 0x20 || line[s] == 0x09 { s += 1 }
        while e > s, line[e - 1] == 0x0d || line[e - 1] == 0x0a || line[e - 1] == 0x20 { e -= 1 }
        headers[name] = String(decoding: line[s..<e], as: UTF8.self)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }
}

private let blockingWriteCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let request = Unmanaged<BlockingRequest>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    if request.body.count < 65_536 {
        data.withMemoryRebound(to: UInt8.self, capacity: n) { request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
    }
    return n
}

private let blockingHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let request = Unmanaged<BlockingRequest>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    data.withMemoryRebound(to: UInt8.self, capacity: n) { request.appendHeader(UnsafeBufferPointer(start: $0, count: n)) }
    return n
}
