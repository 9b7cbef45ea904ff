/// What a device of each service would get for one prepared notification, mapped by the senders' own pure functions
/// (``WebPushPayload``, ``FCMPayload``, ``HMSPayload``): the one place `broadcast --dry-run`, `POST …/payload-preview` and the console
/// (through that route) take their previews from, so a preview cannot drift from what is sent.
public enum ServicePreview {
    /// The id a previewed web payload carries where a sent one has its notification's id (a preview has none).
    public static let previewNotificationId = "00000000-0000-0000-0000-000000000000"
    /// The registration token a previewed FCM message names where a sent one has the device's.
    public static let previewFCMToken = "DEVICE_REGISTRATION_TOKEN"

    /// `{"form": "serviceWorker"|"declarative", "payload", "bytes"}` (the plaintext a browser's service worker, or the
    /// browser itself, gets before encryption), or `{"skipped": reason}` for a notification Web Push does not carry
    /// (a silent push, an Apple-only push type).
    public static func webPush(_ apnsPayload: [UInt8], prepared: PreparedNotification, declarative: Bool) -> JSONValue {
        switch WebPushPayload.map(
            apnsPayload: apnsPayload, pushType: prepared.pushType, id: previewNotificationId, collapseId: prepared.collapseId,
            declarative: declarative)
        {
        case .skip(let reason):
            return .object([("skipped", .string(reason))])
        case .send(let bytes):
            let json = (try? JSONValue(parsing: bytes)) ?? .null
            return .object([
                ("form", .string(json["web_push"] == nil ? "serviceWorker" : "declarative")),
                ("payload", json),
                ("bytes", .int(Int64(bytes.count))),
            ])
        }
    }

    /// `{"payload", "bytes"}`: FCM HTTP v1's request body `{"message": {…}}` for a device (its `token` is
    /// ``previewFCMToken``; `android.ttl` counted at `nowMs`), or `{"skipped": reason}` for a notification FCM does not
    /// carry (an Apple-only push type).
    public static func fcm(_ apnsPayload: [UInt8], prepared: PreparedNotification, nowMs: Int64) -> JSONValue {
        switch FCMPayload.map(
            apnsPayload: apnsPayload, pushType: prepared.pushType, priority: prepared.priority, expiration: prepared.expiration,
            collapseId: prepared.collapseId, token: previewFCMToken, nowMs: nowMs)
        {
        case .skip(let reason):
            return .object([("skipped", .string(reason))])
        case .send(let bytes):
            return .object([("payload", (try? JSONValue(parsing: bytes)) ?? .null), ("bytes", .int(Int64(bytes.count)))])
        }
    }

    /// `{"payload", "bytes"}`: Push Kit's request body for an HMS device (its token ``previewHMSToken``), shaped by
    /// the app's `hms` settings, or `{"skipped": reason}`.
    public static func hms(_ apnsPayload: [UInt8], prepared: PreparedNotification, settings: HMSSettings, nowMs: Int64) -> JSONValue {
        switch HMSPayload.map(
            apnsPayload: apnsPayload, pushType: prepared.pushType, priority: prepared.priority, expiration: prepared.expiration,
            collapseId: prepared.collapseId, token: previewHMSToken, settings: settings, nowMs: nowMs)
        {
        case .skip(let reason):
            return .object([("skipped", .string(reason))])
        case .send(let bytes):
            return .object([("payload", (try? JSONValue(parsing: bytes)) ?? .null), ("bytes", .int(Int64(bytes.count)))])
        }
    }

    /// `{"payload", "bytes", "pushType"}`: Push Kit's scenario-API request body for a HarmonyOS device (its token
    /// ``previewHarmonyOSToken``) and its `push-type`, shaped by the app's `harmonyos` settings, or `{"skipped": reason}`.
    public static func harmonyos(
        _ apnsPayload: [UInt8], prepared: PreparedNotification, settings: HarmonyOSSettings, nowMs: Int64
    ) -> JSONValue {
        switch HarmonyOSPayload.map(
            apnsPayload: apnsPayload, pushType: prepared.pushType, expiration: prepared.expiration,
            collapseId: prepared.collapseId, token: previewHarmonyOSToken, settings: settings, nowMs: nowMs)
        {
        case .skip(let reason):
            return .object([("skipped", .string(reason))])
        case .send(let bytes, let pushType):
            return .object([
                ("payload", (try? JSONValue(parsing: bytes)) ?? .null), ("bytes", .int(Int64(bytes.count))),
                ("pushType", .int(Int64(pushType))),
            ])
        }
    }

    /// The placeholder push token of a HarmonyOS preview.
    public static let previewHarmonyOSToken = "<HarmonyOS push token>"

    /// `{"payload", "bytes"}`: the JSON a UnifiedPush app's code receives (``WebPushPayload`` in its UnifiedPush
    /// form, the plaintext before RFC 8291 encryption), or `{"skipped": reason}` for an Apple-only push type. Unlike
    /// Web Push's, a silent push (a background one, or an alert without text) is sent: the message goes to the app,
    /// not to a browser that must show it.
    public static func unifiedPush(_ apnsPayload: [UInt8], prepared: PreparedNotification) -> JSONValue {
        switch WebPushPayload.map(
            apnsPayload: apnsPayload, pushType: prepared.pushType, id: previewNotificationId, collapseId: prepared.collapseId,
            declarative: false, unifiedPush: true)
        {
        case .skip(let reason):
            return .object([("skipped", .string(reason))])
        case .send(let bytes):
            return .object([("payload", (try? JSONValue(parsing: bytes)) ?? .null), ("bytes", .int(Int64(bytes.count)))])
        }
    }

    /// The placeholder push token of an HMS preview.
    public static let previewHMSToken = "<HMS push token>"

    /// One line of a text preview: `payload (N bytes)`, or `not sent: reason`.
    public static func line(_ preview: JSONValue) -> String {
        if let skipped = preview["skipped"]?.stringValue { return "not sent: \(skipped)" }
        let form = (preview["form"]?.stringValue.map { ", \($0)" } ?? "")
            + (preview["pushType"]?.intValue.map { ", push-type \($0)" } ?? "")
        return "\(preview["payload"]?.encodedString ?? "null") (\(preview["bytes"]?.intValue ?? 0) bytes\(form))"
    }

    /// The text preview's lines for the other services: `webpush: …`, `fcm: …` and `unifiedpush: …` (``line(_:)``) for
    /// the default text, then `webpush locale de: …` per locale; `services` gives a payload's previews as named JSON
    /// fields (`webPush`, `fcm`, `unifiedPush`).
    public static func lines(
        services: ([UInt8]) -> [(String, JSONValue)], payload: [UInt8], variants: [String: [UInt8]]
    ) -> [String] {
        func label(_ field: String) -> String { field == "webPush" ? "webpush" : field == "unifiedPush" ? "unifiedpush" : field }
        var lines = services(payload).map { "\(label($0.0)): \(line($0.1))" }
        for (locale, body) in variants.sorted(by: { $0.key < $1.key }) {
            lines += services(body).map { "\(label($0.0)) locale \(locale): \(line($0.1))" }
        }
        return lines
    }
}
