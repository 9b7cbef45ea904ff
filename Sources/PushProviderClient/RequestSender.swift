import Foundation

/// What became of one request after its retries.
enum RequestOutcome: Sendable {
    /// The server answered 2xx (or an answer the caller counts as done).
    case answered(HTTPResponse)
    /// The server refused it for good (a 4xx other than 408/429): sending it again cannot help.
    case refused(PushProviderClientError)
    /// No success within the attempts: the server is unreachable, overloaded or rate-limiting. `notBefore` is when
    /// the server asked to be tried again, if it said so.
    case deferred(PushProviderClientError, notBefore: Date?)
}

/// Sends one API request with the key, retrying per ``RetryPolicy`` on the injected sleeper. Kept apart from
/// ``Installation`` so the retry rules are one piece of code for the device registration and every Live Activity
/// call alike.
struct RequestSender: Sendable {
    let configuration: ClientConfiguration
    let transport: any HTTPTransport
    let policy: RetryPolicy
    let sleeper: any Sleeper
    let now: @Sendable () -> Date

    /// Sends `method path` with a JSON `body`; `done` says which non-2xx statuses also count as done (a DELETE of
    /// something already gone).
    func send(_ method: String, _ path: [String], body: Data?, doneStatuses: Set<Int> = []) async -> RequestOutcome {
        var headers = ["Authorization": "Bearer \(configuration.registrationKey)", "Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = HTTPRequest(
            method: method, url: configuration.url(path), headers: headers, body: body, timeout: configuration.requestTimeout)
        var attempt = 0
        while true {
            attempt += 1
            let failure: PushProviderClientError
            var retryAfter: TimeInterval? = nil
            do {
                let response = try await transport.send(request)
                if (200...299).contains(response.status) || doneStatuses.contains(response.status) {
                    return .answered(response)
                }
                failure = PushProviderClientError.from(response)
                guard RetryPolicy.isRetryable(status: response.status) else { return .refused(failure) }
                if response.status == 429 || response.status == 503 {
                    retryAfter = RetryPolicy.retryAfterSeconds(response.headers["retry-after"], now: now())
                }
            } catch is CancellationError {
                return .deferred(PushProviderClientError(code: "cancelled", message: "the task was cancelled"), notBefore: nil)
            } catch let error as PushProviderClientError {
                failure = error
            } catch {
                failure = PushProviderClientError(
                    code: "unreachable", message: "\(request.method) \(request.url.path): \(error.localizedDescription)")
            }
            if let retryAfter, retryAfter > policy.maxRetryAfter {
                return .deferred(failure, notBefore: now().addingTimeInterval(retryAfter))
            }
            guard attempt < policy.maxAttempts else {
                return .deferred(failure, notBefore: retryAfter.map { now().addingTimeInterval($0) })
            }
            do {
                try await sleeper.sleep(seconds: policy.delay(afterAttempt: attempt, retryAfter: retryAfter))
            } catch {
                return .deferred(failure, notBefore: nil)
            }
        }
    }
}
