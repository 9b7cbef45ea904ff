import Foundation

/// Starts test children with `posix_spawn` and nothing of this process but their stdin, stdout and stderr, and waits
/// for them with `waitpid`. Foundation's `Process` (swift-corelibs-foundation, 6.3.1) sees a child exit only once
/// every process holding that child's status socket has closed it, and a child another test starts at the same moment
/// inherits the socket: the exited child then looks "running" until the other one ends (a server: the whole test).
/// A child started here inherits nothing (`posix_spawn_file_actions_addclosefrom_np`), its pipe is close-on-exec so no
/// other child holds it open, and its end is read from `waitpid`, which no other process can delay.
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
    /// `stderrPath` (created or truncated; the same path for both appends both to one file), `environment` (nil: this
    /// process's) and, when given, `cwd`. Returns its process id; wait for it with ``poll(_:)`` or ``wait(_:)``.
    public static func start(
        _ executable: String, _ arguments: [String], input: Input = .none, stdoutPath: String, stderrPath: String,
        environment: [String: String]? = nil, cwd: String? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .none: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if stderrPath == stdoutPath {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        guard addCloseFrom(&actions, 3) == 0 else { throw SpawnError("posix_spawn_file_actions_addclosefrom_np failed") }
        if let cwd, addChdir(&actions, cwd) != 0 { throw SpawnError("posix_spawn_file_actions_addchdir_np(\(cwd)) failed") }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc: Int32
        if let environment {
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for p in envp { free(p) } }
            rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        } else {
            rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        }
        guard rc == 0 else { throw SpawnError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        return pid
    }

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
