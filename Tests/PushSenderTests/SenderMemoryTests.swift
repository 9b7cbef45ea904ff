import PushSimulator
import Foundation
import PushCore
import Testing
@testable import PushSender

/// Memory stays flat over a long batch (vapor-apns#54: memory growing per push with libcurl).
///
/// RSS is process-wide, and `swift test` runs other suites in parallel in the same process, which moves it
/// by tens of MB; so this runs only when asked for, alone:
/// `PUSHSENDER_MEMORY_SENDS=200000 swift test --filter SenderMemoryTests`. The same property is measured in
/// a dedicated process by `bench/bench_sender.sh` (peak RSS at 100,000 vs 1,000,000 devices).
@Suite(.timeLimit(.minutes(10)), .enabled(if: ProcessInfo.processInfo.environment["PUSHSENDER_MEMORY_SENDS"] != nil))
struct SenderMemoryTests {
    /// Resident set size of this process in bytes, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    @Test func rssStaysFlatOver200kSends() async throws {
        // 200,000 in release builds; debug builds (the default `swift test`) are ~10x slower, so fewer.
        #if DEBUG
        let defaultTotal = 20_000
        #else
        let defaultTotal = 200_000
        #endif
        let total = Int(ProcessInfo.processInfo.environment["PUSHSENDER_MEMORY_SENDS"] ?? "") ?? defaultTotal
        let sim = try await SimulatorHarness(receivedLimit: 100)
        let sender = try APNsSender(
            target: sim.target(), credentials: FixedCertificate(tlsIdentity: sim.clientIdentity()),
            configuration: SenderConfiguration(window: 2000))
        let counter = Counter()
        let warmup = total / 5
        func batch(_ range: Range<Int>) -> some Sequence<NotificationRequest> {
            range.lazy.map { sim.request(testToken($0)) }
        }
        await sender.run(requests: batch(0..<warmup)) { if $0.isAccepted { counter.add() } }
        let before = Self.residentBytes()
        let middle = warmup + (total - warmup) / 2
        await sender.run(requests: batch(warmup..<middle)) { if $0.isAccepted { counter.add() } }
        let mid = Self.residentBytes()
        await sender.run(requests: batch(middle..<total)) { if $0.isAccepted { counter.add() } }
        let after = Self.residentBytes()
        await sender.shutdown()
        await sim.stop()
        #expect(counter.value == total)
        // RSS is process-wide and other suites run in parallel, so one half may be noisy; a per-notification
        // leak grows both halves. Generous bounds: this guards against growth per push, not a byte budget.
        #expect(min(mid - before, after - mid) < 12 * 1024 * 1024, "RSS \(before) → \(mid) → \(after) bytes")
        // No absolute bound here: parallel suites move process-wide RSS by tens of MB. The absolute figure
        // (peak RSS of a broadcast at 100k vs 1M devices) is measured by bench/bench_sender.sh.
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
