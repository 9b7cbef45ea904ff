import CCurl
import Glibc
import PushCore
import PushLanes

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
