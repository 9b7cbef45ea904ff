import Foundation
import Logging
import PushCore
import PushLanes

/// Apple's broadcast channels (iOS 18) for one app: the channel management API (create, list, read, delete)
/// and broadcast sends to a channel's subscribers.
///
/// Same credentials as device sends (client certificate, or `authorization: bearer <JWT>`). Each request is
/// one blocking libcurl transfer on a thread of its own (never on Swift's cooperative pool). Transient
/// failures (no connection, a dropped connection, 429 and 5xx as for device sends) are retried with backoff within
/// ``Settings/totalTimeoutMs``; in token mode a 403 ExpiredProviderToken refreshes the token once and retries.
/// Other rejections are never retried.
///
/// ```swift
/// let client = try ChannelClient.forApp(app, in: configuration)
/// let id = try await client.create(policy: .mostRecent, environment: nil)
/// _ = try await client.broadcast(channelId: id, notification: prepared, environment: nil)
/// ```
public final class ChannelClient: Sendable {
    /// Retry and timeout settings.
    public struct Settings: Sendable {
        /// Attempts per request, the first included (transient failures only). Default 4.
        public var maxAttempts: Int
        /// Backoff between attempts (full jitter). Default 200 ms doubling to 2 s.
        public var backoff: BackoffPolicy
        /// Bound on one call, retries and waits included, in ms. Default 30 s.
        public var totalTimeoutMs: Int
        /// Bound on one attempt, in ms. Default 10 s.
        public var requestTimeoutMs: Int
        /// Bound on connecting, in ms. Default 5 s.
        public var connectTimeoutMs: Int

        /// Creates settings.
        public init(
            maxAttempts: Int = 4, backoff: BackoffPolicy = BackoffPolicy(baseMs: 200, capMs: 2000),
            totalTimeoutMs: Int = 30_000, requestTimeoutMs: Int = 10_000, connectTimeoutMs: Int = 5000
        ) {
            self.maxAttempts = max(1, maxAttempts)
            self.backoff = backoff
            self.totalTimeoutMs = totalTimeoutMs
            self.requestTimeoutMs = requestTimeoutMs
            self.connectTimeoutMs = connectTimeoutMs
        }
    }

    /// The bundle id channels belong to (`{bundle-id}` in the paths).
    public let bundleId: String
    /// The environment of calls that name none.
    public let defaultEnvironment: APNsEnvironment
    /// The settings in use.
    public let settings: Settings
    private let managementTarget: @Sendable (APNsEnvironment) -> SenderTarget
    private let broadcastTarget: @Sendable (APNsEnvironment) -> SenderTarget
    private let credentials: CredentialProvider
    private let identity: TLSIdentity?
    private let proxy: SenderProxy?
    private let sleeper: Sleeper
    private let random: @Sendable () -> Double
    private let logger: Logger

    /// A client sending to explicit targets. `managementTarget` and `broadcastTarget` give the endpoint for a
    /// request's environment.
    public init(
        bundleId: String, defaultEnvironment: APNsEnvironment = .development,
        managementTarget: @escaping @Sendable (APNsEnvironment) -> SenderTarget,
        broadcastTarget: @escaping @Sendable (APNsEnvironment) -> SenderTarget,
        credentials: CredentialProvider, proxy: SenderProxy? = nil, settings: Settings = .init(),
        sleeper: Sleeper = TaskSleeper(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger = Logger(label: "PushSender.channels")
    ) {
        self.bundleId = bundleId
        self.defaultEnvironment = defaultEnvironment
        self.managementTarget = managementTarget
        self.broadcastTarget = broadcastTarget
        self.credentials = credentials
        self.identity = credentials.tlsIdentity
        self.proxy = proxy
        self.settings = settings
        self.sleeper = sleeper
        self.random = random
        self.logger = logger
    }

    /// The client for one configured app: its APNs credentials (.p12 or .p8), `channelEndpoint` and
    /// `broadcastEndpoint` (see ``APNsSettings/channelEndpoint``), CA file, proxy and, for the simulator, the
    /// simulator's CA. Throws ``CredentialError`` when the credentials or the proxy credentials cannot be read, and
    /// ``SenderError`` (`.configuration`) for an app without APNs: broadcast channels are an APNs feature.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: Settings = .init(),
        logger: Logger = Logger(label: "PushSender.channels")
    ) throws -> ChannelClient {
        guard let apns = app.apns else {
            throw SenderError(.configuration, "broadcast channels are an APNs feature, and the app has no apns service")
        }
        let credentials = try makeCredentials(for: apns)
        let proxy = try configuration.proxy(for: app).map { (settings) throws(CredentialError) in try SenderProxy(settings) }
        let simulator = configuration.simulator
        let channels = apns.effectiveChannelEndpoint, broadcasts = apns.effectiveBroadcastEndpoint, caFile = apns.caFile
        return ChannelClient(
            bundleId: apns.topic, defaultEnvironment: apns.defaultEnvironment,
            managementTarget: { .channelManagement(channels, environment: $0, caFile: caFile, simulator: simulator) },
            broadcastTarget: { .broadcast(broadcasts, environment: $0, caFile: caFile, simulator: simulator) },
            credentials: credentials, proxy: proxy, settings: settings, logger: logger)
    }

    // MARK: - The API

    /// Creates a channel (`POST /1/apps/{bundle-id}/channels`) and returns its id.
    public func create(policy: ChannelStoragePolicy, environment: APNsEnvironment?) async throws(ChannelError) -> String {
        let body = Array(#"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#.utf8)
        // Not resent after a dropped connection: APNs may have created the channel already.
        let answer = try await perform(
            "create", method: "POST", path: channelsPath, environment: environment, headers: [], body: body,
            expect: 201, resendDropped: false)
        guard let id = answer.response.headers["apns-channel-id"], !id.isEmpty else {
            throw ChannelError(.invalidResponse, "APNs answered 201 without an apns-channel-id header", requestId: answer.requestId)
        }
        logger.info("channel created", metadata: ["bundleId": "\(bundleId)", "channelId": "\(id)", "policy": "\(policy.name)"])
        return id
    }

    /// The ids of every channel of the app in `environment` (`GET /1/apps/{bundle-id}/all-channels`).
    public func list(environment: APNsEnvironment?) async throws(ChannelError) -> [String] {
        let answer = try await perform(
            "list", method: "GET", path: "/1/apps/\(bundleId)/all-channels", environment: environment, headers: [],
            body: [], expect: 200, resendDropped: true)
        guard let json = try? JSONValue(parsing: answer.response.body), let items = json["channels"]?.arrayValue else {
            throw ChannelError(.invalidResponse, "APNs answered the channel list without a \"channels\" array", requestId: answer.requestId)
        }
        var ids: [String] = []
        for item in items {
            guard let id = item.stringValue else {
                throw ChannelError(.invalidResponse, "APNs answered a channel list with a non-string id", requestId: answer.requestId)
            }
            ids.append(id)
        }
        return ids
    }

    /// One channel's configuration (`GET /1/apps/{bundle-id}/channels` with `apns-channel-id`).
    public func info(channelId: String, environment: APNsEnvironment?) async throws(ChannelError) -> ChannelInfo {
        let answer = try await perform(
            "info", method: "GET", path: channelsPath, environment: environment, headers: [("apns-channel-id", channelId)],
            body: [], expect: 200, resendDropped: true)
        guard let json = try? JSONValue(parsing: answer.response.body), case .int(let number)? = json["message-storage-policy"],
            let policy = ChannelStoragePolicy(rawValue: Int(number)), let pushType = json["push-type"]?.stringValue
        else {
            throw ChannelError(
                .invalidResponse, "APNs answered the channel's configuration in an unexpected form", requestId: answer.requestId)
        }
        return ChannelInfo(policy: policy, pushType: pushType)
    }

    /// Deletes a channel (`DELETE /1/apps/{bundle-id}/channels` with `apns-channel-id`).
    public func delete(channelId: String, environment: APNsEnvironment?) async throws(ChannelError) {
        _ = try await perform(
            "delete", method: "DELETE", path: channelsPath, environment: environment,
            headers: [("apns-channel-id", channelId)], body: [], expect: 204, resendDropped: true)
        logger.info("channel deleted", metadata: ["bundleId": "\(bundleId)", "channelId": "\(channelId)"])
    }

    /// Broadcasts a Live Activity notification to a channel's subscribers (`POST /4/broadcasts/apps/{bundle-id}`):
    /// `apns-channel-id`, `apns-push-type`, `apns-priority`, `apns-expiration` when set, and `apns-request-id`
    /// (the notification's apns-id, else a new UUID; the same on every retry).
    public func broadcast(
        channelId: String, notification: PreparedNotification, environment: APNsEnvironment?
    ) async throws(ChannelError) -> ChannelBroadcastResult {
        var headers = [
            ("apns-channel-id", channelId), ("apns-push-type", notification.pushType.rawValue),
            ("apns-priority", String(notification.priority.rawValue)),
        ]
        if let expiration = notification.expiration { headers.append(("apns-expiration", String(expiration))) }
        let answer = try await perform(
            "broadcast", method: "POST", path: "/4/broadcasts/apps/\(bundleId)", environment: environment,
            headers: headers, body: notification.payload, expect: 200, resendDropped: true,
            requestId: notification.notificationId, management: false)
        return ChannelBroadcastResult(
            requestId: answer.requestId, uniqueId: answer.response.headers["apns-unique-id"], status: answer.response.status)
    }

    // MARK: - Requests

    private var channelsPath: String { "/1/apps/\(bundleId)/channels" }

    private struct Answer {
        var response: BlockingResponse
        var requestId: String
    }

    /// What one attempt came to.
    private enum Attempt: Sendable {
        case answer(BlockingResponse)
        case failed(TransportError, reachedConnection: Bool)
    }

    /// Sends one request, retrying transient failures, and returns the answer with the `expect`ed status.
    private func perform(
        _ operation: String, method: String, path: String, environment: APNsEnvironment?, headers: [(String, String)],
        body: [UInt8], expect: Int, resendDropped: Bool, requestId given: String? = nil, management: Bool = true
    ) async throws(ChannelError) -> Answer {
        let environment = environment ?? defaultEnvironment
        let target = management ? managementTarget(environment) : broadcastTarget(environment)
        let requestId = given ?? NotificationID.random()
        let deadline = ContinuousClock.now + .milliseconds(settings.totalTimeoutMs)
        var failures = 0
        var refreshedToken = false
        var lines = headers.map { "\($0.0): \($0.1)" }
        lines.append("apns-request-id: \(requestId)")
        if method == "POST" { lines.append("content-type: application/json") }
        let log: Logger.Metadata = [
            "operation": "\(operation)", "bundleId": "\(bundleId)", "endpoint": "\(target)",
            "environment": "\(environment.rawValue)", "requestId": "\(requestId)",
        ]
        while true {
            let authorization: String?
            do { authorization = try credentials.authorizationHeader() } catch {
                throw ChannelError(.credentials, "cannot make a provider token: \(error)")
            }
            var attemptLines = lines
            if let authorization { attemptLines.append("authorization: \(authorization)") }
            let attempt = await transfer(method: method, url: target.description + path, lines: attemptLines, body: body, target: target)

            // Decide: done, retry (after `retryReason`), or fail.
            let retryError: ChannelError
            switch attempt {
            case .answer(let response):
                let answerId = response.headers["apns-request-id"] ?? requestId
                if response.status == expect { return Answer(response: response, requestId: answerId) }
                guard response.status >= 400 else {
                    throw ChannelError(.invalidResponse, "APNs answered HTTP \(response.status) to \(operation), expected \(expect)", requestId: answerId)
                }
                let reason = (try? JSONValue(parsing: response.body))?["reason"]?.stringValue.map(APNsReason.init(rawValue:))
                    ?? .unknown("HTTP \(response.status)")
                if reason == .expiredProviderToken, let authorization, !refreshedToken {
                    // About the credentials, not this request: refresh once, retry at once.
                    refreshedToken = true
                    credentials.providerTokenExpired(authorization)
                    logger.info("provider token expired; refreshed and retrying", metadata: log)
                    continue
                }
                var error = ChannelError.rejected(status: response.status, reason: reason, requestId: answerId)
                if reason == .expiredProviderToken, refreshedToken {
                    // A fresh token expired too: the clock or the key, not this request.
                    error = ChannelError(.credentials, error.message, requestId: answerId)
                }
                // The statuses every APNs answer is retried on (429 and 5xx, ``APNsAnswerRule``): a 502 or 504 from a
                // front end before Apple's hosts is as transient as their own 500 and 503.
                guard APNsAnswerRule.isRetryableStatus(response.status), error.code != .credentials else {
                    logger.debug("APNs refused a channel request (the caller reports it)", metadata: log.merging(["reason": "\(reason.rawValue)", "status": "\(response.status)"]) { $1 })
                    throw error
                }
                retryError = error
            case .failed(let error, let reached):
                switch error.failure(sent: reached) {
                case .refused where error.code == TransportError.notHTTP2("").code:
                    throw ChannelError(.invalidResponse, "\(target) does not speak HTTP/2 (APNs does): \(error.message)")
                case .refused:
                    throw ChannelError(.credentials, "the TLS connection to \(target) was refused: \(error.message)")
                case .unreachable:
                    retryError = ChannelError(.unreachable, "APNs at \(target) is unreachable: \(error.message)")
                case .dropped:
                    retryError = ChannelError(.unreachable, "the connection to APNs at \(target) failed during the request: \(error.message)")
                    guard resendDropped else { throw retryError }
                }
            }
            failures += 1
            let delay = settings.backoff.delayMs(failedAttempts: failures, random: random())
            guard failures < settings.maxAttempts, ContinuousClock.now + .milliseconds(delay) < deadline else {
                logger.debug("channel request failed after retries (the caller reports it)", metadata: log.merging(["error": "\(retryError.message)"]) { $1 })
                throw retryError
            }
            logger.debug("retrying a channel request", metadata: log.merging(["error": "\(retryError.message)", "delayMs": "\(delay)"]) { $1 })
            await sleeper.sleep(milliseconds: delay)
        }
    }

    /// One blocking transfer on the process's ``BlockingLane/shared`` lane.
    private func transfer(method: String, url: String, lines: [String], body: [UInt8], target: SenderTarget) async -> Attempt {
        let settings = settings, identity = identity, proxy = proxy
        let attempt = await BlockingLane.shared.perform { () -> Attempt in
            let request: BlockingRequest
            do throws(TransportError) {
                request = try BlockingRequest(
                    method: method, url: url, headers: lines, body: body, timeoutMs: settings.requestTimeoutMs,
                    connectTimeoutMs: settings.connectTimeoutMs, caFile: target.caFile, identity: identity,
                    connectTo: target.address.map { "\(target.host):\(target.port):\($0):\(target.port)" },
                    route: ProxyRoute(host: target.host, configured: proxy, environment: .process))
            } catch {
                return .failed(error, reachedConnection: false)
            }
            do throws(TransportError) {
                return .answer(try request.perform())
            } catch {
                return .failed(error, reachedConnection: request.reachedConnection)
            }
        }
        return attempt ?? .failed(TransportError(code: -1, message: "too many blocking calls are waiting in this process"), reachedConnection: false)
    }
}
