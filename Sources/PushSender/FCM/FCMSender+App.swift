import Logging
import PushCore

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
