import Logging
import PushCore

extension WebPushSender {
    /// The sender of an app's UnifiedPush devices (`apps.ID.unifiedpush`): Web Push to each user's distributor, signed
    /// with the section's VAPID key (a secret file, refused like every one when others can read it), trusting its
    /// `caFile` besides the system's, with UnifiedPush's answer and address rules (``Service/unifiedPush(_:)``).
    public static func forUnifiedPush(
        _ settings: UnifiedPushSettings, configuration: SenderConfiguration = .init(),
        logger: Logger = Logger(label: "PushSender.UnifiedPush")
    ) throws -> WebPushSender {
        let signer = try VAPIDSigner(pemPath: settings.vapidKey, subject: settings.subject)
        return try WebPushSender(
            signer: signer, service: .unifiedPush(settings.hostPolicy), caFile: settings.caFile, configuration: configuration,
            logger: logger)
    }
}
