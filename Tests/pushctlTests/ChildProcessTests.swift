import Foundation
import Synchronization
import Testing
import TestSupport

/// The children tests start (``ChildProcess``, ``Spawn``): killed with the test process, clean signal state, and not
/// tied to the thread that happened to start them.
@Suite(.timeLimit(.minutes(1))) struct ChildProcessTests {
    @Test func aChildHasSIGKILLAsItsParentDeathSignalAndStartsWithNoBlockedSignals() async throws {
        let dir = try CLI.temporaryDirectory()
        let out = dir.appendingPathComponent("out").path
        // PR_GET_PDEATHSIG (2) writes the parent-death signal; /proc says which signals are blocked and ignored.
        let script = """
            import ctypes
            signal = ctypes.c_int(-1)
            ctypes.CDLL(None).prctl(2, ctypes.byref(signal))
            print("pdeathsig", signal.value)
            for line in open("/proc/self/status"):
                if line.startswith(("SigBlk", "SigIgn")): print(line.strip())
            """
        let child = try ChildProcess("/usr/bin/python3", ["-c", script], stdoutPath: out, stderrPath: out)
        try await child.exited()
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(child.terminationStatus == 0, "\(text)")
        #expect(text.contains("pdeathsig \(SIGKILL)\n"), "\(text)")
        let fields = Dictionary(uniqueKeysWithValues: text.split(separator: "\n").compactMap { line -> (String, UInt64)? in
            let parts = line.split(separator: ":")
            guard parts.count == 2 else { return nil }
            return (String(parts[0]), UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16) ?? .max)
        })
        #expect(fields["SigBlk"] == 0, "\(text)")
        // SIGTERM (15) and SIGINT (2) reach a test's child as they reach a server an operator started.
        let ignored = try #require(fields["SigIgn"])
        #expect(ignored & (1 << (UInt64(SIGTERM) - 1)) == 0 && ignored & (1 << (UInt64(SIGINT) - 1)) == 0, "\(text)")
    }

    @Test func aChildOutlivesTheThreadThatStartedIt() async throws {
        // The parent-death signal fires when the spawning *thread* ends, and libdispatch ends idle threads: a child
        // started from a thread that then ends must keep running. The thread ends only once the child runs Python, so
        // its parent-death signal is set by then (setpriv sets it before it execs the program).
        let out = try CLI.temporaryDirectory().appendingPathComponent("out").path
        let started = try await offThePool { () -> ChildProcess in
            let spawn = Unmanaged.passRetained(ThreadSpawn(out: out))
            var thread = pthread_t()
            let created = pthread_create(&thread, nil, { raw in
                let spawn = Unmanaged<ThreadSpawn>.fromOpaque(raw!).takeUnretainedValue()
                spawn.run()
                return nil
            }, spawn.toOpaque())
            guard created == 0 else { throw BroadcastCommandTests.Failure("pthread_create: \(created)") }
            pthread_join(thread, nil)
            return try spawn.takeRetainedValue().result.withLock { $0! }.get()
        }
        defer { started.kill() }
        // The signal would come as the thread's exit completes, just after pthread_join returns.
        let ended = await started.exited(within: 1)
        #expect(!ended, "the child ended with status \(started.terminationStatus) when the thread that started it did")
    }
}

/// A child started by a thread of its own, which ends once the child says it runs.
private final class ThreadSpawn: Sendable {
    let out: String
    let result = Mutex<Result<ChildProcess, any Error>?>(nil)

    init(out: String) { self.out = out }

    func run() {
        let started = Result {
            try ChildProcess("/usr/bin/python3", ["-c", "import time; print('ready', flush=True); time.sleep(30)"], stdoutPath: out)
        }
        if case .success = started {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("ready") {
                usleep(10_000)
            }
        }
        result.withLock { $0 = started }
    }
}
