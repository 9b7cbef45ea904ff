import CCurl
import COpenSSL

/// The libcurl and OpenSSL this process runs with, as the loaded libraries report themselves (not the headers
/// it was built against): both come from the system and change under an unchanged binary (a security update,
/// `LD_LIBRARY_PATH` to a newer libcurl), so `pushctl --version` asks them.
public enum LinkedLibraries {
    /// libcurl's version with its TLS and HTTP/2 libraries, e.g. `7.88.1 (OpenSSL/3.0.15, nghttp2/1.52.0)`.
    public static var curl: String {
        guard let info = pp_curl_version_info()?.pointee else { return "unknown" }
        let version = info.version.map { String(cString: $0) } ?? "unknown"
        let tls = info.ssl_version.map { String(cString: $0) }
        let http2 = info.nghttp2_version.map { "nghttp2/" + String(cString: $0) }
        let parts = [tls, http2].compactMap { $0 }
        return parts.isEmpty ? version : "\(version) (\(parts.joined(separator: ", ")))"
    }

    /// libcrypto's own version line, e.g. `OpenSSL 3.0.15 3 Sep 2024`.
    public static var openSSL: String {
        guard let text = OpenSSL_version(Int32(OPENSSL_VERSION)) else { return "unknown" }
        return String(cString: text)
    }
}
