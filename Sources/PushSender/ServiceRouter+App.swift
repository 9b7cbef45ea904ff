import Logging
import PushCore

extension ServiceRouter {
    /// What the engine sends an app's devices through: a router to a sender for each service the app has — the
    /// ``APNsSender`` of `apps.ID.apns` with `apnsCredentials`, a ``WebPushSender`` made from `apps.ID.webpush` (its
    /// VAPID key, refused like every secret file, subject, allowed hosts, trust anchors and payload form) and an
    /// ``FCMSender`` made from `apps.ID.fcm` (``FCMSender/forApp(_:in:settings:breakerStates:logger:)``, continuing its
    /// breaker from `breakerStates`) — with the same engine settings and proxy.
    ///
    /// One service's credentials failing to load (an unreadable or wrong .p8, .p12, VAPID key or service account, an
    /// expired certificate) stop that service only: the router holds its failure, and its devices are deferred by name
    /// (``unavailableReason``) while the other services deliver. Only when every service the app has fails does this
    /// throw, the first failure (APNs', else Web Push's, else FCM's), as a one-service app always did.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration,
        apnsCredentials: Result<any CredentialProvider, any Error>?, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> any DeliverySender {
        var failures: [(service: PushService, error: any Error)] = []
        var apns: APNsSender?
        if app.apns != nil {
            do {
                let credentials = try (apnsCredentials ?? .failure(SenderError(.configuration, "no APNs credentials given"))).get()
                apns = try APNsSender.forApp(
                    app, in: configuration, credentials: credentials, settings: settings, breakerStates: breakerStates,
                    logger: logger)
            } catch {
                failures.append((.apns, error))
            }
        }
        // The settings of the other services: the proxy's credentials are the app's, so failing them fails every
        // service (thrown, as before).
        var serviceSettings = settings.applying(app)
        if let proxy = configuration.proxy(for: app) { serviceSettings.proxy = try SenderProxy(proxy) }
        var webPush: WebPushSender?
        if let web = app.webPush {
            do {
                let signer = try VAPIDSigner(pemPath: web.vapidKey, subject: web.subject)
                webPush = try WebPushSender(
                    signer: signer, service: .webPush(web.hostPolicy), caFile: web.caFile, declarative: web.declarative,
                    configuration: serviceSettings, logger: logger)
            } catch {
                failures.append((.webpush, error))
            }
        }
        var fcm: FCMSender?
        if let settings = app.fcm {
            do {
                fcm = try FCMSender.forApp(
                    settings, in: configuration, settings: serviceSettings, breakerStates: breakerStates, logger: logger)
            } catch {
                failures.append((.fcm, error))
            }
        }
        var hms: HMSSender?
        if let settings = app.hms {
            do {
                hms = try HMSSender.forApp(
                    settings, in: configuration, settings: serviceSettings, breakerStates: breakerStates, logger: logger)
            } catch {
                failures.append((.hms, error))
            }
        }
        var harmonyos: HarmonyOSSender?
        if let settings = app.harmonyos {
            do {
                harmonyos = try HarmonyOSSender.forApp(
                    settings, in: configuration, settings: serviceSettings, breakerStates: breakerStates, logger: logger)
            } catch {
                failures.append((.harmonyos, error))
            }
        }
        var unifiedPush: WebPushSender?
        if let settings = app.unifiedPush {
            do {
                unifiedPush = try WebPushSender.forUnifiedPush(settings, configuration: serviceSettings, logger: logger)
            } catch {
                failures.append((.unifiedpush, error))
            }
        }
        if failures.count == app.services.count, let first = failures.first { throw first.error }
        var unavailable: [PushService: String] = [:]
        for (service, error) in failures {
            logger.error(
                "the app's \(service.rawValue) credentials could not be loaded: its devices are deferred, the app's other services send",
                metadata: ["service": "\(service.rawValue)", "error": "\(error)"])
            unavailable[service] = "\(service.rawValue) credentials could not be loaded: \(error)"
        }
        // Always a router, even for one service: a device of a service the app lacks (left in the registry after its
        // section was removed) is then refused by name (NoService), never sent to another service as if its key fit.
        return ServiceRouter(
            apns: apns, webPush: webPush, fcm: fcm, hms: hms, harmonyos: harmonyos, unifiedPush: unifiedPush,
            unavailable: unavailable)
    }

    /// ``forApp(_:in:apnsCredentials:settings:breakerStates:logger:)`` loading the APNs credentials (when the app has
    /// APNs) here.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, settings: SenderConfiguration = .init(),
        breakerStates: [String: PruningBreaker.State] = [:], logger: Logger = Logger(label: "PushSender")
    ) throws -> any DeliverySender {
        let credentials = app.apns.map { apns in
            Result<any CredentialProvider, any Error> { try makeCredentials(for: apns) }
        }
        return try forApp(
            app, in: configuration, apnsCredentials: credentials, settings: settings, breakerStates: breakerStates,
            logger: logger)
    }
}
