import Logging
import PushCore

extension Sender {
    /// A sender for one configured app: its credentials (.p12 or .p8), endpoint and, for the simulator, the
    /// simulator's CA. Throws ``CredentialError`` when the credentials cannot be loaded and ``SenderError``
    /// (`.certificateExpired`) before connecting with an expired certificate. The app's own settings
    /// (``SenderConfiguration/applying(_:)``) override `settings`; `breakerStates` continues the pruning
    /// breakers persisted by earlier runs. The app's proxy (else the global one) carries its connections;
    /// unreadable proxy credentials are a ``CredentialError``.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> Sender {
        try forApp(
            app, in: configuration, credentials: try makeCredentials(for: app), settings: settings,
            breakerStates: breakerStates, logger: logger)
    }

    /// A sender for one configured app with credentials already loaded (``makeCredentials(for:now:)``, for
    /// instance on another thread while the caller opened its registry). Throws as
    /// ``forApp(_:in:settings:breakerStates:logger:)`` does once the credentials are loaded.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, credentials: any CredentialProvider,
        settings: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        logger: Logger = Logger(label: "PushSender")
    ) throws -> Sender {
        var settings = settings
        if let proxy = configuration.proxy(for: app) { settings.proxy = try SenderProxy(proxy) }
        let notAfterMs = (credentials as? CertificateCredentials).map { $0.facts.notAfter * 1000 }
        return try Sender(
            app: app, simulator: configuration.simulator, credentials: credentials, configuration: settings,
            breakerStates: breakerStates, certificateNotAfterMs: notAfterMs, logger: logger)
    }
}

extension SenderConfiguration {
    /// This configuration with an app's overrides from the config file applied (`apps.ID.window`,
    /// `apps.ID.connections`, `apps.ID.outageLimitSeconds`).
    public func applying(_ app: AppSettings) -> SenderConfiguration {
        var copy = self
        if let window = app.window { copy.window = max(1, window) }
        if let connections = app.connections { copy.connections = max(1, connections) }
        if let seconds = app.outageLimitSeconds { copy.outageLimitMs = seconds * 1000 }
        return copy
    }
}

extension ServiceRouter {
    /// What the engine sends an app's devices through: a router to the app's APNs ``Sender`` and, with Web Push
    /// configured, a ``WebPushSender`` made from
    /// `apps.ID.webpush` — its VAPID key (refused like every secret file), subject, allowed hosts, trust anchors and
    /// payload form — with the same engine settings and proxy. Throws as ``Sender/forApp(_:in:credentials:settings:breakerStates:logger:)``,
    /// and ``CredentialError`` for an unreadable VAPID key.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, credentials: any CredentialProvider,
        settings: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        logger: Logger = Logger(label: "PushSender")
    ) throws -> any DeliverySender {
        let apns = try Sender.forApp(
            app, in: configuration, credentials: credentials, settings: settings, breakerStates: breakerStates, logger: logger)
        // Always a router, even without Web Push: a web device left in the registry after its app's `webpush` was
        // removed is then refused by name (NoService), never sent to APNs as if its key were a token.
        guard let web = app.webPush else { return ServiceRouter(apns: apns, webPush: nil) }
        let signer = try VAPIDSigner(pemPath: web.vapidKey, subject: web.subject)
        var webSettings = settings.applying(app)
        if let proxy = configuration.proxy(for: app) { webSettings.proxy = try SenderProxy(proxy) }
        let webPush = try WebPushSender(
            signer: signer, policy: web.hostPolicy, caFile: web.caFile, declarative: web.declarative,
            configuration: webSettings, logger: logger)
        return ServiceRouter(apns: apns, webPush: webPush)
    }

    /// ``forApp(_:in:credentials:settings:breakerStates:logger:)`` loading the APNs credentials first.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> any DeliverySender {
        try forApp(
            app, in: configuration, credentials: try makeCredentials(for: app), settings: settings,
            breakerStates: breakerStates, logger: logger)
    }
}
