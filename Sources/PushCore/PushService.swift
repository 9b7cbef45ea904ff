/// The push service a device belongs to. A device belongs to exactly one, for its whole life: registering the same
/// key under another service is refused, never a silent switch (the engine routes each device by it).
public enum PushService: String, Sendable, CaseIterable, Codable {
    /// Apple's provider API (native apps). Every device registered before Web Push existed.
    case apns
    /// Web Push (RFC 8030): browsers and iOS home-screen web apps, identified by their subscription's endpoint.
    case webpush
    /// Firebase Cloud Messaging HTTP v1 (Android), identified by its registration token (``FCMRegistrationToken``).
    case fcm
    /// Huawei Push Kit for HMS Core (Android phones without Google Play services: Huawei's, Honor's before 2021),
    /// identified by its push token (``HMSPushToken``), sent through `POST /v1/{clientId}/messages:send`.
    case hms
    /// Huawei Push Kit for HarmonyOS NEXT (HarmonyOS 5 and later, no Android), identified by its push token
    /// (``HarmonyOSPushToken``), sent through the scenario API `POST /v3/{projectId}/messages:send` with a
    /// service-account JWT (docs/harmonyos.md).
    case harmonyos
    /// UnifiedPush (SERV_1.2.0, AND_3.0.0): de-Googled Android and privacy-minded apps, through the distributor the user
    /// chose; standard Web Push (RFC 8291, VAPID) to the endpoint it gave, identified by that endpoint.
    case unifiedpush
}
