import Foundation
import PushSecrets
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File access for credentials: reads through PushSecrets' ``SecretFileLoader`` (the one reader of secret files)
/// with its errors as ``CredentialError``, and writes that create files with their final mode (keys are never
/// world-readable, not even for a moment).
enum CredentialFiles {
    /// The whole secret file; `name` is how errors name it (a configuration key, or what the file is).
    static func read(_ path: String, name: String) throws(CredentialError) -> [UInt8] {
        do { return try SecretFileLoader.read(path, name: name) } catch { throw CredentialError(error) }
    }

    /// The secret file's first line (``SecretFileLoader/firstLine(of:)``), as text.
    static func firstLine(_ path: String, name: String) throws(CredentialError) -> String {
        do { return try SecretFileLoader.readFirstLine(path, name: name) } catch { throw CredentialError(error) }
    }

    /// Writes `bytes` to `path` (created or truncated) with permissions `mode`.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(CredentialError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw CredentialError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // O_CREAT applies the umask and leaves an existing file's mode alone: set it explicitly.
        guard fchmod(fd, mode) == 0 else { throw CredentialError(.io, "cannot chmod \(path): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw CredentialError(.io, "cannot write \(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }
}

/// `write(2)`, named so it does not clash with ``CredentialFiles/write(_:to:mode:)``.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
