import Foundation
import PushCore
import Synchronization

/// One OAuth 2.0 access token per service account, shared by every connection and worker: the fix for "access
/// tokens fetched too often or too late" (PyFCM #334, firebase-admin's per-send refreshes).
///
/// Rules, enforced here so no caller can break them:
/// - every caller gets the current token; at most one grant is in flight, and callers that need a token while
///   there is none wait for that one grant (however many there are);
/// - the token is renewed ``renewalMargin(lifetime:)`` before it expires (a twelfth of its lifetime, at most
///   5 minutes: 55 s of a 60 s token, 55 min of Google's one-hour tokens), so the renewal period is the lifetime
///   less the margin and a token is never used after it expires; while that renewal is in flight the still-valid
///   token keeps being handed out, so no send waits on it;
/// - ``rejected(_:)`` (FCM answered 401 with this token) forces one renewal, and only for the current token: a
///   hundred connections reporting the same refused token cause one grant;
/// - a failed grant is not retried at once: until ``retryPolicy``'s delay has passed (1 s after the first failure,
///   doubling per consecutive failure up to 60 s, half of it jittered), callers that have no valid token get that
///   grant's error without a new request, and callers that still hold an unexpired token keep using it. A token
///   endpoint that refuses or is down therefore sees at most one grant per delay from this cache, not one per send.
///
/// The grant itself (the HTTP POST of ``FCMServiceAccount/grantRequestBody(issuedAt:)``) is passed in, and so is
/// the clock.
public final class AccessTokenCache: Sendable {
    /// What a token endpoint grants: `access_token` and `expires_in` (seconds).
    public struct Grant: Sendable, Equatable {
        /// `access_token`: sent as `Authorization: Bearer …`.
        public var accessToken: String
        /// `expires_in`: the token's lifetime in seconds, counted from its arrival.
        public var expiresIn: TimeInterval
        /// Creates a grant.
        public init(accessToken: String, expiresIn: TimeInterval) {
            self.accessToken = accessToken
            self.expiresIn = expiresIn
        }
    }

    /// A granted token and the times the cache judges it by (its own clock's, at the grant's arrival).
    public struct Token: Sendable, Equatable {
        /// The access token.
        public var value: String
        /// When its grant arrived.
        public var receivedAt: Date
        /// When it stops being valid: `receivedAt` + `expires_in`.
        public var expiresAt: Date
        /// When it is renewed: ``AccessTokenCache/renewalMargin(lifetime:)`` before it expires.
        public var renewAt: Date
    }

    /// The renewal margin for a token of `lifetime` seconds: a twelfth of it, at most 5 minutes.
    public static func renewalMargin(lifetime: TimeInterval) -> TimeInterval {
        min(max(lifetime, 0) / 12, 300)
    }

    /// The delay after consecutive failed grants before the next one.
    public static let retryPolicy = BackoffPolicy(baseMs: 1000, capMs: 60_000, jitter: 0.5)

    private struct State {
        var current: Token?
        var renewing: Task<Token, any Error>?
        var grants = 0
        /// Grants that threw (refused, or no answer: a timeout), every one counted in `grants` too.
        var failedGrants = 0
        /// Consecutive failed grants, the last one's error and when the next may start.
        var failures = 0
        var lastFailure: (any Error)?
        var retryAt: Date?
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date
    private let grant: @Sendable () async throws -> Grant

    /// Creates a cache that asks `grant` for tokens, judging their age by `now`.
    public init(now: @escaping @Sendable () -> Date = { Date() }, grant: @escaping @Sendable () async throws -> Grant) {
        self.now = now
        self.grant = grant
    }

    /// How many grants this cache has asked for (for health, metrics and tests), failed ones included: one per renewal
    /// period and per ``rejected(_:)`` renewal, plus ``grantsFailed`` (each failure is asked again after
    /// ``retryPolicy``'s delay).
    public var grantsRequested: Int { state.withLock { $0.grants } }

    /// How many of ``grantsRequested`` failed: the token endpoint refused, or did not answer in time (a libcurl
    /// timeout on a starved machine). Requested minus failed is the number of tokens this cache got.
    public var grantsFailed: Int { state.withLock { $0.failedGrants } }

    /// The cached token while it is before its renewal time, else nil (then ask ``token()``, which renews): a send
    /// path's fast way in, with no task or suspension.
    public func freshToken() -> Token? {
        let time = now()
        return state.withLock { state in state.current.flatMap { time < $0.renewAt ? $0 : nil } }
    }

    /// The current token: the cached one while it is before its renewal time, otherwise the one grant in flight
    /// (started here if none is). Throws the grant's error when there is no valid token to fall back on.
    public func token() async throws -> Token {
        enum Step { case ready(Token), wait(Task<Token, any Error>), fail(any Error) }
        let step: Step = state.withLock { state in
            let time = now()
            if let current = state.current, time < current.renewAt { return .ready(current) }
            var task = state.renewing
            // After a failed grant, no new one until its retry time (see the type's rules).
            if task == nil, state.retryAt.map({ time >= $0 }) ?? true { task = startRenewal(&state) }
            // Renewing: a token that has not expired yet is still good to send with.
            if let current = state.current, time < current.expiresAt { return .ready(current) }
            if let task { return .wait(task) }
            return .fail(state.lastFailure ?? CredentialError(.invalidInput, "the token endpoint refused the last grant"))
        }
        switch step {
        case .ready(let token): return token
        case .wait(let task): return try await task.value
        case .fail(let error): throw error
        }
    }

    /// Whether `token` has lived half its lifetime by this cache's clock. A 401 for such a token is an expiry race (it
    /// expired on the wire, or the service's clock runs ahead of ours) and is worth a renewal whatever came before; a
    /// 401 for a younger one, after a renewal, is a refusal of the credentials. It takes half a lifetime for a token to
    /// get there, so this can never make renewals spin.
    public func isHalfSpent(_ token: Token) -> Bool {
        now() >= token.receivedAt.addingTimeInterval(token.expiresAt.timeIntervalSince(token.receivedAt) / 2)
    }

    /// FCM refused `value` (401 UNAUTHENTICATED): renew once, if it is still the current token. Callers then
    /// ask ``token()`` again.
    public func rejected(_ value: String) {
        state.withLock { state in
            guard let current = state.current, current.value == value else { return }
            state.current = nil
        }
    }

    /// Starts the one grant (the lock is held: the task's completion waits for it before storing the result).
    private func startRenewal(_ state: inout State) -> Task<Token, any Error> {
        state.grants += 1
        let task = Task { [grant, now] () async throws -> Token in
            do {
                let granted = try await grant()
                let received = now()
                let lifetime = max(granted.expiresIn, 0)
                let token = Token(
                    value: granted.accessToken, receivedAt: received, expiresAt: received.addingTimeInterval(lifetime),
                    renewAt: received.addingTimeInterval(lifetime - Self.renewalMargin(lifetime: lifetime)))
                self.finish(with: .success(token))
                return token
            } catch {
                self.finish(with: .failure(error))
                throw error
            }
        }
        state.renewing = task
        return task
    }

    private func finish(with result: Result<Token, any Error>) {
        let time = now()
        state.withLock { state in
            state.renewing = nil
            switch result {
            case .success(let token):
                state.current = token
                state.failures = 0
                state.lastFailure = nil
                state.retryAt = nil
            case .failure(let error):
                state.failedGrants += 1
                state.failures += 1
                state.lastFailure = error
                let delayMs = Self.retryPolicy.delayMs(failedAttempts: state.failures, random: Double.random(in: 0..<1))
                state.retryAt = time.addingTimeInterval(Double(delayMs) / 1000)
            }
        }
    }
}
