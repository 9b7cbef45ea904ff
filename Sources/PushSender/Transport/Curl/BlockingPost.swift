import CCurl
import Glibc
import PushCore
import PushLanes

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
