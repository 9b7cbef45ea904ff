import CBuildInfo
import PushCore
import PushSender
import PushStore

/// What `pushctl --version` prints: enough to say exactly what runs in production.
///
///     pushctl 1.0.0
///     commit 382d3fd1c2a76a10c1bd4e5b0f47b8d6e3a1c9f2
///     libcurl 7.88.1 (OpenSSL/3.0.15, nghttp2/1.52.0)
///     OpenSSL 3.0.15 3 Sep 2024
///     SQLite 3.40.1
///
/// The first line is ``ProductVersion/semantic`` (packages take their version from it); the commit is the one
/// the build was made from (`unknown` outside git or when built without the Makefile); the libraries are the
/// ones loaded now, which the system may have updated since the build.
enum VersionReport {
    static func text() -> String {
        [
            "pushctl \(ProductVersion.semantic)",
            "commit \(String(cString: pp_build_commit()))",
            "libcurl \(LinkedLibraries.curl)",
            LinkedLibraries.openSSL,
            "SQLite \(SQLiteLibrary.version)",
        ].joined(separator: "\n")
    }
}
