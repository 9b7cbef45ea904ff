import PushCore
import Foundation
import Testing
import PushLanes
import PushSender

struct NamedThreadTests {
    /// What the kernel calls the thread running `body`-started code (its `comm`), read on that thread.
    private func kernelName(startingThreadNamed name: String) async -> String {
        await withCheckedContinuation { (c: CheckedContinuation<String, Never>) in
            NamedThread.start(name) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "<unreadable>"
                c.resume(returning: comm.trimmingCharacters(in: .newlines))
            }
        }
    }

    @Test func theKernelShowsTheThreadUnderItsName() async {
        #expect(await kernelName(startingThreadNamed: "sender-apns") == "sender-apns")
    }

    @Test func aNameLongerThanTheKernelKeepsIsCutToFifteenBytes() async {
        #expect(await kernelName(startingThreadNamed: "pushctl-registrations") == "pushctl-registr")
    }
}
