import Crypto
import PushCore

/// A device's key in the registry and everywhere the engine keys by it (shards by hex range, checkpoints, outcomes,
/// the delivery and prune logs). An APNs device's key is its token. A Web Push device's key is the 32 bytes
/// SHA-256("webpush:" + endpoint URL), an FCM device's SHA-256("fcm:" + registration token), an
/// HMS device's SHA-256("hms:" + push token), a HarmonyOS device's SHA-256("harmonyos:" + push token), a UnifiedPush device's SHA-256("unifiedpush:" + endpoint URL): uniform over the key
/// space like APNs tokens, so range shards stay even and every existing query works unchanged; the endpoint or
/// registration token itself is stored beside it. The prefixes keep the services' key spaces apart.
public enum DeviceKey {
    /// The key of the Web Push device whose subscription's endpoint is `endpointURL`, in any spelling of it: the
    /// key hashes the endpoint's canonical form (``WebPushEndpoint/url``), so `HTTPS://Host:443/x` and
    /// `https://host/x` are one device, and a replacement may name its old endpoint either way. Text that is not an
    /// endpoint is hashed as given.
    public static func webPush(endpointURL: String) -> DeviceToken {
        let canonical = (try? WebPushEndpoint(parsing: endpointURL))?.url ?? endpointURL
        let digest = SHA256.hash(data: Array(("webpush:" + canonical).utf8))
        // 32 bytes is within DeviceToken's 8…100: this cannot fail.
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `subscription`'s device.
    public static func of(_ subscription: WebPushSubscription) -> DeviceToken {
        webPush(endpointURL: subscription.endpoint.url)
    }

    /// The key of the UnifiedPush device whose endpoint is `endpointURL`, in any spelling of it (http or https):
    /// SHA-256("unifiedpush:" + canonical endpoint), a key space apart from Web Push's.
    public static func unifiedPush(endpointURL: String) -> DeviceToken {
        let canonical = (try? WebPushEndpoint(parsing: endpointURL, allowingHTTP: true))?.url ?? endpointURL
        let digest = SHA256.hash(data: Array(("unifiedpush:" + canonical).utf8))
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of the FCM device whose registration token is `token` (exactly as the app gave it).
    public static func fcm(token: String) -> DeviceToken {
        let digest = SHA256.hash(data: Array(("fcm:" + token).utf8))
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `token`'s device.
    public static func of(_ token: FCMRegistrationToken) -> DeviceToken { fcm(token: token.value) }

    /// The key of the HMS device whose push token is `token` (exactly as the app gave it): SHA-256("hms:" + token).
    public static func hms(token: String) -> DeviceToken {
        let digest = SHA256.hash(data: Array(("hms:" + token).utf8))
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `token`'s device.
    public static func of(_ token: HMSPushToken) -> DeviceToken { hms(token: token.value) }

    /// The key of the HarmonyOS device whose push token is `token` (exactly as the app gave it):
    /// SHA-256("harmonyos:" + token), a key space apart from HMS Core's.
    public static func harmonyos(token: String) -> DeviceToken {
        let digest = SHA256.hash(data: Array(("harmonyos:" + token).utf8))
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `token`'s device.
    public static func of(_ token: HarmonyOSPushToken) -> DeviceToken { harmonyos(token: token.value) }
}
