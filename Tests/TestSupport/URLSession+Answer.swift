import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// `request`'s answer, through a data task and a continuation rather than `data(for:)`. On Linux,
    /// FoundationNetworking's async `data(for:)` can deadlock when its task is cancelled while the request fails:
    /// the cancellation handler (run under the task's status lock) waits on the session's queue, whose completion
    /// waits on that lock. A task group whose child threw cancels its siblings exactly so, and a whole test run hung
    /// on it (every later URLSession call in the process queued behind the deadlocked one). This call is not
    /// cancelled: it ends with its answer or its own timeout.
    public func answer(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            let task = dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let http = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), http))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            task.resume()
        }
    }

    /// The answer to a GET of `url` (see ``answer(for:)``).
    public func answer(from url: URL) async throws -> (Data, HTTPURLResponse) {
        try await answer(for: URLRequest(url: url))
    }
}
