import Logging
import PushCore

extension HMSSender {
    /// The HMS sender for an app's `apps.ID.hms`: its client secret (refused like every secret file), one
    /// ``AccessTokenCache`` posting grants to ``tokenURL(for:target:)``, and the Push Kit host of its endpoint.
    /// `settings` are used as given (apply the app's overrides and proxy first, as
    /// ``ServiceRouter/forApp(_:in:apnsCredentials:settings:breakerStates:logger:)`` does); `breakerStates` continues its
    /// pruning breaker (``HMSSender/breakerKey``).
    public static func forApp(
        _ hms: HMSSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender.HMS")
    ) throws -> HMSSender {
        let target = target(for: hms, simulator: configuration.simulator)
        let credentials = try HMSClientCredentials(
            clientId: hms.clientId, secretFile: hms.clientSecretFile, tokenURL: tokenURL(for: hms, target: target),
            configurationKey: "hms.clientSecretFile")
        let tokens = AccessTokenCache(clientCredentials: credentials, caFile: target.caFile, proxy: settings.proxy)
        return try HMSSender(
            credentials: credentials, tokens: tokens, settings: hms, target: target, configuration: settings,
            breakerStates: breakerStates, logger: logger)
    }
}
