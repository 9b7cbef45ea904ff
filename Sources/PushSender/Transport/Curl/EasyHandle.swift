import CCurl
import Glibc
import PushCore
import PushLanes

/// One reusable `CURL*`: set up once, then re-armed per request (curl keeps the connection in the multi).
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headers: HeaderList?
    private var connectTo: HeaderList?
    /// This handle's request id line (``IdHeaders/request``, APNs' `apns-id: …`): a list node of our own, chained in
    /// front of the shared headers of each request (curl only reads the list), so arming a request allocates no
    /// header memory.
    private let idNode: UnsafeMutablePointer<curl_slist>
    private let idLine = CLine(capacity: 64)
    /// The URL of a shaped request, written here from the endpoint's prefix and a path (libcurl copies it): a
    /// `String` joined per request, then copied into a C array for the call, cost ~500 instructions (callgrind).
    private let urlLine = CLine(capacity: 128)
    /// The id of the current request (written under ``IdHeaders/request``).
    private var requestId = ""
    /// Response body bytes (services send a small JSON object, mostly on errors only).
    var body: [UInt8] = []
    /// The answer's ``IdHeaders/answer`` header (APNs' `apns-id`).
    var notificationId: String?
    /// The answer's ``IdHeaders/unique`` header (APNs' `apns-unique-id`, development environment only).
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
        try check(pp_curl_easy_setopt_closesocket_callback(raw, easyCloseSocketCallback), "CLOSESOCKETFUNCTION")
        try check(
            pp_curl_easy_setopt_pointer(raw, CURLOPT_CLOSESOCKETDATA, Unmanaged.passUnretained(options.connections).toOpaque()),
            "CLOSESOCKETDATA")
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

    /// Re-arms the handle for one POST to `url`: the request id line (``EasyOptions/idHeaders``, when `id` is given)
    /// followed by `headers` (shared by many requests and kept alive by the handle until its next request); curl
    /// copies the URL and the body.
    func prepare(url: String, id requestId: String?, headers: HeaderList, body payload: [UInt8]) throws(TransportError) {
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, url), "URL")
        try prepare(id: requestId, headers: headers, body: payload)
    }

    /// ``prepare(url:id:headers:body:)`` for the URL `prefix` + `path` (for APNs an endpoint's
    /// `https://host/3/device/` and a token).
    func prepare(urlPrefix prefix: String, path: String, id requestId: String?, headers: HeaderList, body payload: [UInt8])
        throws(TransportError)
    {
        var (prefix, path) = (prefix, path)
        prefix.withUTF8 { p in path.withUTF8 { urlLine.set(UnsafeRawBufferPointer(p), $0) } }
        try check(pp_curl_easy_setopt_string(raw, CURLOPT_URL, urlLine.pointer), "URL")
        try prepare(id: requestId, headers: headers, body: payload)
    }

    private func prepare(id requestId: String?, headers: HeaderList, body payload: [UInt8]) throws(TransportError) {
        connectionsAtStart = options.connections.opened
        sentAtMs = 0
        refusedAddress = nil
        body.removeAll(keepingCapacity: true)
        notificationId = nil
        uniqueId = nil
        retryAfter = nil
        errorBuffer[0] = 0
        if let requestId, let idName = options.idHeaders?.request {
            self.requestId = requestId
            // curl is not reading the line: the handle carries no transfer while it is armed.
            var value = requestId
            value.withUTF8 { idLine.set(UnsafeRawBufferPointer(start: idName.utf8Start, count: idName.utf8CodeUnitCount), $0) }
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
        // Only the service's id lines (``EasyOptions/idHeaders``) and `retry-after` are read: the others (the status
        // line, the blank end) are passed by their first letter instead of being matched against each name (~600
        // instructions per answer, callgrind).
        guard let first = line.first.map({ $0 | 0x20 }) else { return }
        if let ids = options.idHeaders, first == ids.answerInitial {
            if let v = Self.value(of: ids.answer, in: line) {
                // The service echoes the request's id: keep the request's string rather than allocating a copy.
                // Compared as bytes (memcmp): the generic `utf8.elementsEqual` cost ~1,900 instructions per answer.
                notificationId = Self.bytesEqual(&requestId, v) ? requestId : String(decoding: v, as: UTF8.self)
                return
            } else if let unique = ids.unique, let v = Self.value(of: unique, in: line) {
                uniqueId = String(decoding: v, as: UTF8.self)
                return
            }
        }
        if first == UInt8(ascii: "r"), let v = Self.value(of: "retry-after:", in: line) {
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
    if let reason = handle.addressCheck?.refusal(of: address) {
        handle.refusedAddress = reason
        return pp_curl_socket_bad()
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

/// Counts closed sockets (``ConnectionCounter/closed``) and closes the socket, as libcurl would have. libcurl calls
/// it with the data of the handle that opened the connection; the counter outlives every connection of its transport
/// (``MultiHandle`` keeps it until `curl_multi_cleanup` has closed them).
private let easyCloseSocketCallback: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = {
    counter, fd in
    if let counter { Unmanaged<ConnectionCounter>.fromOpaque(counter).takeUnretainedValue().closed += 1 }
    return close(fd)
}

private let easyHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let data, let user else { return 0 }
    let handle = Unmanaged<EasyHandle>.fromOpaque(user).takeUnretainedValue()
    let n = size * count
    data.withMemoryRebound(to: UInt8.self, capacity: n) { handle.appendHeader(UnsafeBufferPointer(start: $0, count: n)) }
    return n
}
