import Foundation

/// Runs blocking work (a libcurl transfer) on a thread of its own, so Swift's cooperative pool never blocks.
enum OffPoolThread {
    /// Runs `body` on a new thread and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            NamedThread.start("pushctl-offpool") { continuation.resume(returning: body()) }
        }
    }
}
