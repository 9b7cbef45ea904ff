import Foundation
import Synchronization

/// Starts test children with `posix_spawn` and nothing of this process but their stdin, stdout and stderr, and waits
/// for them with `waitpid`. Foundation's `Process` (swift-corelibs-foundation, 6.3.1) sees a child exit only once
/// every process holding that child's status socket has closed it, and a child another test starts at the same moment
/// inherits the socket: the exited child then looks "running" until the other one ends (a server: the whole test).
/// A child started here inherits nothing (`posix_spawn_file_actions_addclosefrom_np`), its pipe is close-on-exec so no
/// other child holds it open, and its end is read from `waitpid`, which no other process can delay.
///
/// A child also dies with the test process. It starts with an empty signal mask and default handling of the signals
/// tests send (the test process blocks some, and a child would inherit that), and through util-linux's `setpriv
/// --pdeathsig KILL`, which asks the kernel to SIGKILL it when its parent goes. "Parent" there is the thread that
/// spawned it, and libdispatch ends idle worker threads after seconds, so every child is spawned from one thread that
/// lives as long as the process (``SpawnThread``). A test process that crashes (a trap, a time limit) then leaves no
/// server, worker or simulator running behind it.
public enum Spawn {
    /// How a child ended: its exit status, or the number of the signal that ended it (as `Process.terminationStatus`).
    public static func status(_ wait: Int32) -> Int32 {
        let signal = wait & 0x7f
        return signal == 0 ? (wait >> 8) & 0xff : signal
    }

    /// What the child reads as stdin.
    public enum Input {
        /// `/dev/null`.
        case none
        /// This descriptor (dup'ed onto 0 in the child).
        case descriptor(Int32)
    }

    /// Starts `executable arguments…` with stdin from `input`, stdout and stderr into the files at `stdoutPath` and
    /// `stderrPath` (created, then truncated or, with `append`, appended to; the same path for both puts both in one
    /// file), `environment` (nil: this process's) and, when given, `cwd`. Returns its process id; wait for it with
    /// ``poll(_:)`` or ``wait(_:)``.
    public static func start(
        _ executable: String, _ arguments: [String], input: Input = .none, stdoutPath: String, stderrPath: String,
        environment: [String: String]? = nil, cwd: String? = nil, append: Bool = false
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .none: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        let mode = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, mode, 0o600)
        if stderrPath == stdoutPath {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, mode, 0o600)
        }
        guard addCloseFrom(&actions, 3) == 0 else { throw SpawnError("posix_spawn_file_actions_addclosefrom_np failed") }
        if let cwd, addChdir(&actions, cwd) != 0 { throw SpawnError("posix_spawn_file_actions_addchdir_np(\(cwd)) failed") }
        // setpriv execs the program in place (the pid is the program's), so it cannot report a program that does not
        // run: posix_spawn's own error is kept by checking first.
        guard access(executable, X_OK) == 0 else {
            throw SpawnError("cannot start \(executable): \(String(cString: strerror(errno)))")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let program = deathSignal ?? executable
        let prefix = deathSignal == nil ? [] : ["--pdeathsig", "KILL", "--"]
        let argv = ([program] + prefix + [executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for p in envp ?? [] { free(p) } }
        var pid: pid_t = 0
        let rc = withUnsafeMutablePointer(to: &actions) { actions in
            withUnsafeMutablePointer(to: &attributes) { attributes in
                withUnsafeMutablePointer(to: &pid) { pid in
                    nonisolated(unsafe) let (actions, attributes, pid) = (actions, attributes, pid)
                    return SpawnThread.shared.perform {
                        if let envp { return posix_spawn(pid, program, actions, attributes, argv, envp) }
                        return posix_spawn(pid, program, actions, attributes, argv, environ)
                    }
                }
            }
        }
        guard rc == 0 else { throw SpawnError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// util-linux's `setpriv` (Essential on Debian), which starts a program with a parent-death signal; nil where it
    /// is missing, and children then outlive a crashed test process as they always did.
    private static let deathSignal: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") ? "/usr/bin/setpriv" : nil

    /// The child's ``status(_:)`` once it has ended (reaped then), nil while it runs.
    public static func poll(_ pid: pid_t) -> Int32? {
        var wait: Int32 = 0
        while true {
            let r = waitpid(pid, &wait, WNOHANG)
            if r == pid { return status(wait) }
            if r == 0 { return nil }
            if errno != EINTR { return -1 }
        }
    }

    /// Blocks until the child has ended; its ``status(_:)``.
    @available(*, noasync, message: "blocks the calling thread")
    public static func wait(_ pid: pid_t) -> Int32 {
        var wait: Int32 = 0
        while waitpid(pid, &wait, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return status(wait)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Debian 12 has 2.36), which Swift's Glibc
    /// module does not import.
    nonisolated(unsafe) private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 =
        unsafeBitCast(symbol("posix_spawn_file_actions_addclosefrom_np"), to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), likewise not imported.
    nonisolated(unsafe) private static let addChdir: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32 =
        unsafeBitCast(symbol("posix_spawn_file_actions_addchdir_np"), to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer {
        guard let symbol = dlsym(nil, name) else { fatalError("\(name) not found: glibc 2.34 or later is needed") }
        return symbol
    }
}

/// Why a child could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The one thread every child is spawned from: a child's parent-death signal fires when the thread that spawned it
/// ends, and this one never does. Requests wait their turn; a spawn takes about a millisecond.
final class SpawnThread: Sendable {
    static let shared = SpawnThread()

    private let queue = Mutex<[@Sendable () -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                wake.wait()
                let work = queue.withLock { q -> (@Sendable () -> Void)? in q.isEmpty ? nil : q.removeFirst() }
                work?()
            }
        }
        thread.name = "test-spawner"
        thread.start()
    }

    /// Runs `body` on the spawning thread and returns its result, blocking the caller meanwhile (the pointers it
    /// uses stay valid, and the wait is the moment a spawn takes).
    func perform<T: Sendable>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Slot<T>()
        nonisolated(unsafe) let body = body
        queue.withLock { $0.append { result.value.withLock { $0 = body() }; done.signal() } }
        wake.signal()
        done.wait()
        return result.value.withLock { $0! }
    }

    private final class Slot<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }
}
