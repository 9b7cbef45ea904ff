import Foundation

/// This app installation as the PushProvider server knows it — the client-side twin of a Parse `PFInstallation`:
/// the APNs token (and the one it replaces), the installation id, time zone, locale, versions, environment,
/// channels, tags and the logged-in user, plus the Live Activity tokens.
///
/// Setters change the wanted state in memory; ``save()`` sends what differs from what the server last
/// acknowledged — in one request, or none — and persists both, so it is safe to call at every launch and on every
/// token callback. When the server cannot be reached the changes stay on disk, collapsed (three token rotations are
/// one replacement of the last acknowledged token), and a later `save()` — in this process or after the app was
/// killed and relaunched — sends them. Only a refusal the app must act on (a 4xx other than 408/429) is thrown.
///
/// An actor: the app's delegate callbacks, its login code and a background refresh may all touch it at once.
public actor Installation {
    private let configuration: ClientConfiguration
    private let store: any StateStore
    private let sender: RequestSender
    private let now: @Sendable () -> Date
    private var state: ClientState
    /// The bytes last written (a `save()` with nothing new writes nothing).
    private var written: Data?
    /// The `save()` running now: a second one waits for it, then sends what is left.
    private var running: Task<SaveOutcome, any Error>?

    /// An installation whose state lives in `stateStore`.
    ///
    /// - Parameters:
    ///   - configuration: the server, the app id and its registration key.
    ///   - stateStore: where the wanted and the acknowledged state are kept between launches.
    ///   - installationId: the app's own id for this install, if it has one it prefers (e.g.
    ///     `identifierForVendor`); otherwise the stored one, else a new random UUID, kept from then on.
    ///   - facts: time zone, locale, app and OS version, set again at every launch (``DeviceFacts/current`` by
    ///     default; the app version comes from the main bundle on Apple platforms — pass it on Linux).
    ///   - transport: how requests are sent (``URLSessionTransport`` by default; injected by tests).
    ///   - retry: how often and how long a request is retried within one ``save()``.
    ///   - sleeper: how the waits between retries are slept (injected by tests).
    ///   - now: the clock `Retry-After` times are stored against (injected by tests).
    /// - Throws: `state_unreadable` when the stored state is damaged or from a newer version.
    public init(
        configuration: ClientConfiguration, stateStore: any StateStore, installationId: String? = nil,
        facts: DeviceFacts = .current, transport: any HTTPTransport = URLSessionTransport(),
        retry: RetryPolicy = .standard, sleeper: any Sleeper = TaskSleeper(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.configuration = configuration
        self.store = stateStore
        self.now = now
        self.sender = RequestSender(configuration: configuration, transport: transport, policy: retry, sleeper: sleeper, now: now)
        var loaded: ClientState
        let bytes: Data?
        do { bytes = try stateStore.load() } catch {
            throw PushProviderClientError(code: "state_unreadable", message: "cannot read the client state: \(error)")
        }
        if let bytes {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            do { loaded = try decoder.decode(ClientState.self, from: bytes) } catch {
                throw PushProviderClientError(code: "state_unreadable", message: "the client state is damaged: \(error)")
            }
            guard loaded.version <= ClientState.currentVersion else {
                throw PushProviderClientError(
                    code: "state_unreadable", message: "the client state is version \(loaded.version), newer than this library")
            }
            written = bytes
        } else {
            loaded = ClientState(installationId: installationId ?? UUID().uuidString)
        }
        if let installationId, installationId != loaded.installationId { loaded.installationId = installationId }
        loaded.desired.installation = loaded.installationId
        if let v = facts.timeZone { loaded.desired.timeZone = v }
        if let v = facts.locale { loaded.desired.locale = v }
        if let v = facts.appVersion { loaded.desired.appVersion = v }
        if let v = facts.osVersion { loaded.desired.osVersion = v }
        state = loaded
    }

    /// An installation whose state is the file `installation.json` in `stateDirectory` (created when needed).
    public init(
        configuration: ClientConfiguration, stateDirectory: URL, installationId: String? = nil,
        facts: DeviceFacts = .current, transport: any HTTPTransport = URLSessionTransport(),
        retry: RetryPolicy = .standard, sleeper: any Sleeper = TaskSleeper(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(
            configuration: configuration, stateStore: DirectoryStateStore(directory: stateDirectory),
            installationId: installationId, facts: facts, transport: transport, retry: retry, sleeper: sleeper, now: now)
    }

    #if canImport(Darwin)
    /// An installation kept in `Application Support/PushProviderClient/<app>/`.
    public init(configuration: ClientConfiguration, installationId: String? = nil, facts: DeviceFacts = .current) throws {
        try self.init(
            configuration: configuration, stateStore: try DirectoryStateStore.applicationSupport(app: configuration.app),
            installationId: installationId, facts: facts)
    }
    #endif

    // MARK: - What the app reads

    /// The installation id (made once and kept; the id push-to-start tokens are registered under).
    public var installationId: String { state.installationId }
    /// The wanted state (as of the latest setter).
    public var fields: InstallationFields { state.desired }
    /// What the server acknowledged last; its `token` is the one a new token replaces.
    public var acknowledged: InstallationFields? { state.acknowledged }
    /// The device token, lowercase hex.
    public var deviceToken: String? { state.desired.token }
    /// The channels the device is (to be) subscribed to.
    public var channels: [String] { state.desired.channels }
    /// The logged-in user.
    public var user: String? { state.desired.user }
    /// Live Activity calls waiting to be sent.
    public var pendingLiveActivityChanges: [LiveActivityChange] { state.outbox }

    // MARK: - What the app sets (sent by the next save())

    /// The token APNs gave (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`), as its bytes.
    public func setDeviceToken(_ token: Data) {
        state.desired.token = token.lowercaseHex
    }

    /// The token as hex digits (any case).
    public func setDeviceToken(hex: String) throws {
        guard let bytes = Data(hex: hex), !bytes.isEmpty else {
            throw PushProviderClientError(code: "invalid_token", message: "a device token is hex digits")
        }
        state.desired.token = bytes.lowercaseHex
    }

    /// Subscribes to `channel`.
    public func subscribe(_ channel: String) {
        setChannels(state.desired.channels + [channel])
    }

    /// Unsubscribes from `channel`.
    public func unsubscribe(_ channel: String) {
        setChannels(state.desired.channels.filter { $0 != channel })
    }

    /// Replaces the channels.
    public func setChannels(_ channels: [String]) {
        state.desired.channels = Array(Set(channels)).sorted()
    }

    /// Sets (or with nil removes) one tag.
    public func setTag(_ key: String, _ value: TagValue?) {
        state.desired.tags[key] = value
    }

    /// Replaces the tags.
    public func setTags(_ tags: [String: TagValue]) {
        state.desired.tags = tags
    }

    /// The APNs environment of the token (nil: the app's default on the server).
    public func setEnvironment(_ environment: APNsEnvironment?) {
        state.desired.environment = environment
    }

    /// The time zone (an IANA name), overriding the device's.
    public func setTimeZone(_ name: String?) { state.desired.timeZone = name }
    /// The locale (BCP 47), overriding the device's.
    public func setLocale(_ tag: String?) { state.desired.locale = tag }
    /// The app version, overriding the bundle's.
    public func setAppVersion(_ version: String?) { state.desired.appVersion = version }
    /// The OS version, overriding the device's.
    public func setOSVersion(_ version: String?) { state.desired.osVersion = version }

    /// Attaches `user` to this device, with the proof the app's backend issued for it (lowercase hex
    /// HMAC-SHA256(user) under the app's user secret): a registration key cannot name a user without it, so an
    /// install cannot claim someone else's notifications.
    public func login(user: String, userAuth: String) {
        state.desired.user = user
        state.desired.userAuth = userAuth
    }

    /// Detaches the user from this device only (registers `"user": null`); the user's other devices keep them.
    public func logout() {
        state.desired.user = nil
        state.desired.userAuth = nil
    }

    // MARK: - Live Activities

    /// Registers this installation's push-to-start token for an `ActivityAttributes` type (iOS 17.2+:
    /// `Activity<T>.pushToStartTokenUpdates`), under ``installationId``; a newer one for the same type replaces it.
    @discardableResult
    public func registerPushToStartToken(_ token: Data, attributesType: String, channels: [String] = []) async throws -> SaveOutcome {
        try await enqueue(.pushToStartToken(token: token.lowercaseHex, attributesType: attributesType, channels: channels))
    }

    /// Registers an activity's update token (`activity.pushTokenUpdates`); a newer one for the activity replaces it.
    @discardableResult
    public func registerUpdateToken(_ token: Data, activityId: String, attributesType: String? = nil) async throws -> SaveOutcome {
        try await enqueue(.updateToken(token: token.lowercaseHex, activityId: activityId, attributesType: attributesType))
    }

    /// Reports that an activity ended on the device (`activityStateUpdates` gave `.ended` or `.dismissed`): the
    /// server drops its update tokens. An update token for it still waiting in the outbox is dropped unsent.
    @discardableResult
    public func activityEnded(activityId: String) async throws -> SaveOutcome {
        try await enqueue(.activityEnded(activityId: activityId))
    }

    private func enqueue(_ kind: LiveActivityChange.Kind) async throws -> SaveOutcome {
        state.outbox = LiveActivityChange.enqueue(LiveActivityChange(kind: kind), into: state.outbox)
        return try await save()
    }

    // MARK: - Saving

    /// Persists the wanted state and sends what the server has not acknowledged: the device's registration (one
    /// request, only the changed fields; none when nothing changed), then the Live Activity outbox in order.
    ///
    /// - Returns: ``SaveOutcome/upToDate`` (no request), ``SaveOutcome/sent``, or ``SaveOutcome/pending(_:)`` when
    ///   changes wait on disk for a later call (server unreachable or asking for a pause, or no token yet).
    /// - Throws: ``PushProviderClientError`` when the server refused a request for good (400 with the field's
    ///   code, 401, 403 `forbidden_user`, …): not retried, since the same request would fail again. A refused
    ///   registration stays wanted (a later `save()` tries it again once); a refused Live Activity call is dropped.
    ///   Also when the state cannot be written.
    @discardableResult
    public func save() async throws -> SaveOutcome {
        while let previous = running { _ = try? await previous.value; if running == previous { running = nil } }
        let task = Task { try await self.flush() }
        running = task
        defer { if running == task { running = nil } }
        return try await task.value
    }

    private func flush() async throws -> SaveOutcome {
        try persist()
        if let notBefore = state.notBefore {
            if now() < notBefore {
                return .pending(PushProviderClientError(
                    code: "rate_limited", message: "the server asked for a pause until \(notBefore)"))
            }
            state.notBefore = nil
            try persist()
        }
        var sentAny = false
        var waiting: PushProviderClientError?

        // The device: one request from the acknowledged state to the wanted one.
        let snapshot = state.desired
        if let body = RegistrationBody(from: state.acknowledged, to: snapshot) {
            switch await sender.send("POST", ["devices"], body: try body.json()) {
            case .answered:
                state.acknowledged = snapshot
                try persist()
                sentAny = true
            case .refused(let error):
                throw error
            case .deferred(let error, let notBefore):
                return try defer_(error, notBefore)
            }
        } else if snapshot.token == nil {
            waiting = PushProviderClientError(code: "no_token", message: "the registration waits for a device token from APNs")
        }

        // The Live Activity outbox, in order.
        while let change = state.outbox.first {
            let request = try change.request(installationId: state.installationId, environment: snapshot.environment)
            let outcome = await sender.send(request.method, request.path, body: request.body, doneStatuses: request.doneStatuses)
            switch outcome {
            case .answered:
                state.outbox.removeAll { $0.id == change.id }
                try persist()
                sentAny = true
            case .refused(let error):
                state.outbox.removeAll { $0.id == change.id }
                try persist()
                throw error
            case .deferred(let error, let notBefore):
                return try defer_(error, notBefore)
            }
        }
        if let waiting { return .pending(waiting) }
        return sentAny ? .sent : .upToDate
    }

    /// Records the server's pause, if any, and reports the changes as pending.
    private func defer_(_ error: PushProviderClientError, _ notBefore: Date?) throws -> SaveOutcome {
        if let notBefore { state.notBefore = notBefore }
        try persist()
        return .pending(error)
    }

    /// Writes the state when it differs from what was last written.
    private func persist() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let bytes = try encoder.encode(state)
        guard bytes != written else { return }
        do { try store.store(bytes) } catch {
            throw PushProviderClientError(code: "state_unwritable", message: "cannot write the client state: \(error)")
        }
        written = bytes
    }
}
