import Logging
import PushCore

extension APNsSender {
    /// A sender for one configured app's APNs service: its credentials (.p12 or .p8), endpoint and, for the
    /// simulator, the simulator's CA. Throws ``CredentialError`` when the credentials cannot be loaded and
    /// ``SenderError`` (`.certificateExpired`) before connecting with an expired certificate, `.configuration` for an
    /// app without APNs. The app's own settings (``SenderConfiguration/applying(_:)``) override `settings`;
    /// `breakerStates` continues the pruning breakers persisted by earlier runs. The app's proxy (else the global
    /// one) carries its connections; unreadable proxy credentials are a ``CredentialError``.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> APNsSender {
        guard let apns = app.apns else { throw SenderError(.configuration, "the app has no apns service") }
        return try forApp(
            app, in: configuration, credentials: try makeCredentials(for: apns), settings: settings,
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
