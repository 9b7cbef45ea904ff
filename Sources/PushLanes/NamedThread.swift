import Foundation

/// Starts the long-lived threads pushctl runs outside Swift's cooperative pool (a connection's curl loop, the
/// outcome committer, the webhook poster, the registration writer) under names the operating system shows —
/// `top -H`, `perf`, `/proc/PID/task/*/comm` — so an operator can tell which one is busy. On Linux, Foundation's
/// `Thread.name` never reaches the kernel (and Swift's Glibc module does not import `pthread_setname_np`), and
/// the kernel keeps at most 15 bytes of a name: the thread writes its own name to `/proc/thread-self/comm`
/// (proc(5)) before running `body`. Where that fails the thread simply keeps its inherited name.
public enum NamedThread {
    /// Starts `body` on a new thread named `name` (at most 15 bytes; a longer one is cut there) and returns it.
    @discardableResult
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let kernelName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        let thread = Thread {
            nameCurrentThread(kernelName)
            body()
        }
        thread.name = name
        thread.start()
        return thread
    }

    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var name = name
        _ = name.withUTF8 { write(fd, $0.baseAddress, $0.count) }
    }
}
