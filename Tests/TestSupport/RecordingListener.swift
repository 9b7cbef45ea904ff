import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that records what each connection sends first (up to 4 KB) and answers it with a
/// canned reply, then closes it: a stand-in proxy that refuses every `CONNECT`, or a port that must stay untouched.
/// Its thread accepts until ``stop()``; ``connections`` counts every accepted connection.
public final class RecordingListener: Sendable {
    /// The port it listens on.
    public let port: Int
    private let fd: Int32
    private let reply: [UInt8]
    private let state = Mutex(State())

    private struct State {
        var received: [String] = []
        var stopped = false
    }

    /// Listens on an ephemeral port; `reply` is written to every connection after its first read.
    public init(reply: String = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n") throws {
        self.reply = Array(reply.utf8)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// What each connection sent first, in the order they came.
    public var received: [String] { state.withLock { $0.received } }

    /// How many connections were accepted.
    public var connections: Int { received.count }

    /// Stops accepting (the accept loop ends on the closed socket).
    public func stop() {
        let first = state.withLock { s in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(client, &buffer, buffer.count)
            let text = n > 0 ? String(decoding: buffer.prefix(n), as: UTF8.self) : ""
            state.withLock { $0.received.append(text) }
            _ = reply.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
        }
    }
}
