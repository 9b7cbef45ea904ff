import Logging
import PushCore

extension APNsSender {
    /// A sender for one configured app: its credentials (.p12 or .p8), endpoint and, for the simulator, the
    /// simulator's CA. Throws ``CredentialError`` when the credentials cannot be loaded and ``SenderError``
    /// (`.certificateExpired`) before connecting with an expired certificate. The app's own settings
    /// (``SenderConfiguration/applying(_:)``) override `settings`; `breakerStates` continues the pruning
    /// breakers persisted by earlier runs. The app's proxy (else the global one) carries its connections;
    /// unreadable proxy credentials are a ``CredentialError``.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> APNsSender {
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
    ) throws -> APNsSender {
        var settings = settings
        if let proxy = configuration.proxy(for: app) { settings.proxy = try SenderProxy(proxy) }
        let notAfterMs = (credentials as? CertificateCredentials).map { $0.facts.notAfter * 1000 }
        return try APNsSender(
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
    /// What the engine sends an app's devices through: a router to the app's APNs ``APNsSender`` and, with Web Push
    /// configured, a ``WebPushSender`` made from
    /// `apps.ID.webpush` — its VAPID key (refused like every secret file), subject, allowed hosts, trust anchors and
    /// payload form — and, with FCM configured, an ``FCMSender`` made from `apps.ID.fcm`
    /// (``FCMSender/forApp(_:in:settings:breakerStates:logger:)``, continuing its breaker from `breakerStates`), with the same engine settings and proxy. Throws as
    /// ``APNsSender/forApp(_:in:credentials:settings:breakerStates:logger:)``, and ``CredentialError`` for an unreadable
    /// VAPID key or service account.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, credentials: any CredentialProvider,
        settings: SenderConfiguration = .init(), breakerStates: [String: PruningBreaker.State] = [:],
        logger: Logger = Logger(label: "PushSender")
    ) throws -> any DeliverySender {
        let apns = try APNsSender.forApp(
            app, in: configuration, credentials: credentials, settings: settings, breakerStates: breakerStates, logger: logger)
        // Always a router, even without Web Push or FCM: a web or Android device left in the registry after its app's
        // `webpush` or `fcm` was removed is then refused by name (NoService), never sent to APNs as if its key were a token.
        var serviceSettings = settings.applying(app)
        if let proxy = configuration.proxy(for: app) { serviceSettings.proxy = try SenderProxy(proxy) }
        var webPush: WebPushSender?
        if let web = app.webPush {
            let signer = try VAPIDSigner(pemPath: web.vapidKey, subject: web.subject)
            webPush = try WebPushSender(
                signer: signer, policy: web.hostPolicy, caFile: web.caFile, declarative: web.declarative,
                configuration: serviceSettings, logger: logger)
        }
        let fcm = try app.fcm.map { (fcm) throws -> FCMSender in
            try FCMSender.forApp(fcm, in: configuration, settings: serviceSettings, breakerStates: breakerStates, logger: logger)
        }
        return ServiceRouter(apns: apns, webPush: webPush, fcm: fcm)
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

extension FCMSender {
    /// The FCM sender for an app's `apps.ID.fcm`: its service account (refused like every secret file; an unreadable,
    /// non-JSON or incomplete file is a ``CredentialError`` naming it), one ``AccessTokenCache`` posting grants to
    /// ``tokenURI(for:account:target:)``, and the FCM host of its endpoint. `settings` are used as given (apply the
    /// app's overrides and proxy first, as ``ServiceRouter/forApp(_:in:credentials:settings:breakerStates:logger:)``
    /// does); `breakerStates` (the app's persisted breakers) continues its pruning breaker (``FCMSender/breakerKey``).
    public static func forApp(
        _ fcm: FCMSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender.FCM")
    ) throws -> FCMSender {
        let loaded = try FCMServiceAccount(path: fcm.serviceAccount, configurationKey: "fcm.serviceAccount")
        let target = target(for: fcm, simulator: configuration.simulator)
        let account = loaded.postingGrants(to: tokenURI(for: fcm, account: loaded, target: target))
        let tokens = AccessTokenCache(serviceAccount: account, caFile: target.caFile, proxy: settings.proxy)
        return try FCMSender(
            account: account, tokens: tokens, target: target, configuration: settings, breakerStates: breakerStates, logger: logger)
    }
}
