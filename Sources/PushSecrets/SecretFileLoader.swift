#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way this program reads a secret file: the `.p12` and its password file, the `.p8`, a VAPID key, an FCM
/// service account, the proxy's credentials, a webhook's secret, a user secret, the PostgreSQL password. Every
/// reader goes through it, so the rules below hold for all of them alike:
///
/// - The path is opened (`O_RDONLY | O_CLOEXEC`, and `O_NONBLOCK`, so a FIFO put where a secret belongs is refused at
///   once instead of blocking the process until something writes to it), and what was opened is judged with `fstat`
///   on that descriptor — never a separate `stat` of the path, which a file replaced in between would pass.
/// - Symlinks are followed (no `O_NOFOLLOW`): a Kubernetes secret mount or `/etc/pushprovider/current.p8 ->
///   2026.p8` is a symlink to the real file, and it is the file reached that is judged.
/// - It must be a regular file: a directory, a FIFO, a device or a socket is refused.
/// - The mode rule, as OpenSSH applies it to private keys: refused when other users (not the owner, not the group)
///   have any access to it (``forbiddenBits``), since anyone on the machine could take or replace the credential.
///   The group may read it — and, as before this loader, write it — so the documented `root:pushprovider 0640`
///   works: the service's group reads files it does not own. Of the three checks there were (the configuration's,
///   the VAPID key's, the service account's), all applied this same mode rule, and the strictest handling of
///   everything else is kept: a file that cannot be opened or examined is an error (never skipped), and one that is
///   not a regular file is refused (the VAPID key's rule, now everyone's).
/// - At most ``sizeLimit`` bytes are read; a larger file is refused.
///
/// Errors (``SecretFileError``) name the file and `name` — the configuration key when the caller knows it
/// (`apps.example.auth.p8`), else what the file is (`.p8 key`) — and never its contents.
public enum SecretFileLoader {
    /// The largest secret file read: 1 MiB. Real ones are a few KB at most (a `.p12` with its chain, a service
    /// account's JSON); anything bigger is the wrong file, and reading it whole would only cost memory.
    public static let sizeLimit = 1 << 20

    /// The permission bits that refuse a secret file: any access for others (not owner, not group).
    public static let forbiddenBits: UInt32 = 0o007

    /// The file's bytes, after the checks above.
    public static func read(_ path: String, name: String) throws(SecretFileError) -> [UInt8] {
        try withJudgedFile(path, name: name) { (fd, size) throws(SecretFileError) in
            try readAll(fd, expected: size, path: path, name: name)
        }
    }

    /// The first line of the file as text (``firstLine(of:)``): how a password, the proxy's `user:password`, a
    /// webhook or user secret and the PostgreSQL password are read. Not UTF-8 is an error naming the file; an empty
    /// line is returned as it is (whether a secret may be empty is the caller's rule).
    public static func readFirstLine(_ path: String, name: String) throws(SecretFileError) -> String {
        let bytes = try read(path, name: name)
        guard let text = String(validating: firstLine(of: bytes), as: UTF8.self) else {
            throw SecretFileError(.notText, path: path, message: "\(name): \(path) is not UTF-8 text")
        }
        return text
    }

    /// Opens and judges the file without reading it: the configuration's check of every secret file it names,
    /// made when it loads, so even a command that reads none of them refuses a configuration that exposes one.
    public static func check(_ path: String, name: String) throws(SecretFileError) {
        try withJudgedFile(path, name: name) { (_, _) throws(SecretFileError) in }
    }

    /// The one line rule for secrets kept on a line of their own: the bytes up to the first LF (all of them when
    /// there is none), less one CR before it or at the end (a file saved with Windows line endings). Nothing else is
    /// trimmed: a space or a tab may be part of a password, and one silently dropped would fail as a wrong password
    /// no one could see. Later lines are ignored, so an editor's trailing newline or blank line changes nothing.
    public static func firstLine(of bytes: [UInt8]) -> ArraySlice<UInt8> {
        var line = bytes[..<(bytes.firstIndex(of: 0x0A) ?? bytes.endIndex)]
        if line.last == 0x0D { line = line.dropLast() }
        return line
    }

    /// Why a regular file with permission bits `mode` must not be used, or nil when it may: one line naming the
    /// file and the fix.
    static func refusal(mode: UInt32, path: String, name: String) -> String? {
        let permissions = mode & 0o7777
        guard permissions & forbiddenBits != 0 else { return nil }
        let octal = String(permissions, radix: 8)
        return "\(name): \(path) is accessible by other users (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); "
            + "run chmod 600 \(path) (or chmod 640 to let the service's group read it)"
    }

    /// Opens `path`, judges the opened file (type, mode, size) and runs `body` with the descriptor and its size.
    private static func withJudgedFile<T>(
        _ path: String, name: String, _ body: (Int32, Int) throws(SecretFileError) -> T
    ) throws(SecretFileError) -> T {
        var fd: Int32
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let number = errno
            if number == ENOENT { throw SecretFileError(.missing, path: path, message: "\(name): \(path): no such file") }
            throw SecretFileError(.unreadable, path: path, message: "\(name): \(path): cannot open (\(describe(number)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecretFileError(.unreadable, path: path, message: "\(name): \(path): cannot examine (\(describe(errno)))")
        }
        let mode = UInt32(info.st_mode)
        let type = mode & 0o170000
        guard type == 0o100000 else {
            throw SecretFileError(.notRegularFile, path: path, message: "\(name): \(path) is not a regular file (\(kind(type)))")
        }
        if let refusal = refusal(mode: mode, path: path, name: name) {
            throw SecretFileError(.exposed, path: path, message: refusal)
        }
        let size = Int(info.st_size)
        guard size <= sizeLimit else { throw tooLarge(path, name) }
        return try body(fd, size)
    }

    /// Reads `fd` to its end, refusing it once it passes ``sizeLimit`` (a file that grew since `fstat`, or one whose
    /// size the kernel does not report).
    private static func readAll(_ fd: Int32, expected: Int, path: String, name: String) throws(SecretFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(expected)
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SecretFileError(.unreadable, path: path, message: "\(name): \(path): cannot read (\(describe(errno)))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
            guard bytes.count <= sizeLimit else { throw tooLarge(path, name) }
        }
    }

    private static func tooLarge(_ path: String, _ name: String) -> SecretFileError {
        SecretFileError(.tooLarge, path: path, message: "\(name): \(path) is larger than \(sizeLimit) bytes, too large for a secret file")
    }

    /// What a file of type bits `type` is, for the message.
    private static func kind(_ type: UInt32) -> String {
        switch type {
        case 0o040000: "a directory"
        case 0o010000: "a FIFO"
        case 0o020000: "a character device"
        case 0o060000: "a block device"
        case 0o140000: "a socket"
        default: "file type \(String(type, radix: 8))"
        }
    }

    private static func describe(_ number: Int32) -> String { String(cString: strerror(number)) }
}

/// `read(2)`, named so it does not clash with ``SecretFileLoader/read(_:name:)``.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
