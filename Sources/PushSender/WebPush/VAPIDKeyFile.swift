import Crypto
import Foundation
import PushCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A new VAPID key on disk: what `pushctl webpush key new` makes.
public enum VAPIDKeyFile {
    /// Makes a P-256 private key and writes it to `path` as PEM (PKCS#8 `PRIVATE KEY`), mode 0600, created with
    /// that mode (never readable by others, not even for a moment) and never over an existing file (a VAPID key
    /// replaced by mistake orphans every browser subscription made with it). Returns the public key, base64url
    /// of its uncompressed point: what a web app's `applicationServerKey` wants.
    public static func create(at path: String) throws(CredentialError) -> String {
        let key = P256.Signing.PrivateKey()
        let pem = Array((key.pemRepresentation + "\n").utf8)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "already exists; a new key would orphan the subscriptions made with the old one (remove it first to replace it)"
                : String(cString: strerror(errno))
            throw CredentialError(.io, "\(path): \(reason)")
        }
        var failure: String?
        if fchmod(fd, 0o600) != 0 { failure = "cannot chmod: \(String(cString: strerror(errno)))" }
        var offset = 0
        while failure == nil && offset < pem.count {
            let written = pem[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { failure = "cannot write: \(String(cString: strerror(errno)))"; break }
            offset += written
        }
        if failure == nil && fsync(fd) != 0 { failure = "cannot sync: \(String(cString: strerror(errno)))" }
        close(fd)
        if let failure {
            unlink(path)
            throw CredentialError(.io, "\(path): \(failure)")
        }
        return Base64URL.encode(key.publicKey.x963Representation)
    }
}
