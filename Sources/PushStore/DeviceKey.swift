import Crypto
import PushCore

/// A device's key in the registry and everywhere the engine keys by it (shards by hex range, checkpoints, outcomes,
/// the delivery and prune logs). An APNs device's key is its token. A Web Push device's key is the 32 bytes
/// SHA-256("webpush:" + endpoint URL), an FCM device's SHA-256("fcm:" + registration token): uniform over the key
/// space like APNs tokens, so range shards stay even and every existing query works unchanged; the endpoint or
/// registration token itself is stored beside it. The prefixes keep the services' key spaces apart.
public enum DeviceKey {
    /// The key of the Web Push device whose subscription's endpoint is `endpointURL` (exactly as the browser gave
    /// it: a replacement names the old endpoint the same way).
    public static func webPush(endpointURL: String) -> DeviceToken {
        let digest = SHA256.hash(data: Array(("webpush:" + endpointURL).utf8))
        // 32 bytes is within DeviceToken's 8…100: this cannot fail.
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `subscription`'s device.
    public static func of(_ subscription: WebPushSubscription) -> DeviceToken {
        webPush(endpointURL: subscription.endpoint.url)
    }

    /// The key of the FCM device whose registration token is `token` (exactly as the app gave it).
    public static func fcm(token: String) -> DeviceToken {
        let digest = SHA256.hash(data: Array(("fcm:" + token).utf8))
        return try! DeviceToken(bytes: Array(digest))
    }

    /// The key of `token`'s device.
    public static func of(_ token: FCMRegistrationToken) -> DeviceToken { fcm(token: token.value) }
}
