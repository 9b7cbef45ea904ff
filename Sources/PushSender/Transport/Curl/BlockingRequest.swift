import CCurl
import Glibc
import PushCore
import PushLanes

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
    /// Judges every address libcurl is about to connect to on a direct route (as the transport's
    /// ``EasyOptions/addressCheck``); nil connects to any.
    fileprivate let addressCheck: AddressCheck?
    /// Why ``addressCheck`` refused the address of the last transfer's connection, if it did.
    fileprivate var refusedAddress: String?

    /// - Parameters:
    ///   - method: `GET`, `POST` or `DELETE`; only POST sends `body`.
    ///   - connectTo: `host:port:address:port` for `CURLOPT_CONNECT_TO`, or nil.
    ///   - requireHTTP2: an answer over HTTP/1.1 is an error (APNs); false for endpoints that may speak either (an
    ///     OAuth token endpoint).
    init(
        method: String, url: String, headers lines: [String], body payload: [UInt8], timeoutMs: Int,
        connectTimeoutMs: Int, caFile: String?, identity: TLSIdentity?, connectTo line: String?, route: ProxyRoute,
        certificateInfo: Bool = false, requireHTTP2: Bool = true, addressCheck: AddressCheck? = nil
    ) throws(TransportError) {
        _ = CurlGlobal.initialized
        guard let raw = curl_easy_init() else { throw TransportError(code: -1, message: "curl_easy_init failed") }
        self.raw = raw
        self.identity = identity
        self.requireHTTP2 = requireHTTP2
        self.addressCheck = addressCheck
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
        if addressCheck != nil, route.isDirect {
            try check(pp_curl_easy_setopt_opensocket_callback(raw, blockingOpenSocketCallback), "OPENSOCKETFUNCTION")
            try check(pp_curl_easy_setopt_pointer(raw, CURLOPT_OPENSOCKETDATA, me), "OPENSOCKETDATA")
        }
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
        refusedAddress = nil
        let code = curl_easy_perform(raw)
        guard code == CURLE_OK else {
            if let refusedAddress { throw TransportError.addressRefused(refusedAddress) }
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

/// Opens a connection's socket unless ``BlockingRequest``'s address check refuses the address (the request then fails
/// before any byte is sent, with ``TransportError/addressRefused(_:)``).
private let blockingOpenSocketCallback: @convention(c) (UnsafeMutableRawPointer?, curlsocktype, UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t = {
    user, _, address in
    guard let user, let address else { return pp_curl_socket_bad() }
    let request = Unmanaged<BlockingRequest>.fromOpaque(user).takeUnretainedValue()
    if let reason = request.addressCheck?.refusal(of: address) {
        request.refusedAddress = reason
        return pp_curl_socket_bad()
    }
    return pp_curl_open_socket(address)
}
