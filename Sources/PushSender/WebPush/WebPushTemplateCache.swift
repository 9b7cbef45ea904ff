import PushCore

/// The templates of the last few notifications a Web Push sender mapped (``WebPushPayload/Template``): a broadcast
/// sends one notification, or one per locale, to every device, so each is mapped once and not once per device.
///
/// Why a few and not one: a broadcast with per-locale text interleaves its locales' notifications; eight cover the
/// common case, and a miss costs only the mapping it would have cost anyway. The key is what the mapping reads (the
/// payload's bytes, the push type, the collapse id; the declarative form is the sender's); comparing a payload a
/// broadcast's requests share is one pointer comparison.
struct WebPushTemplateCache: Sendable {
    static let capacity = 8

    private struct Entry: Sendable {
        let payload: [UInt8]
        let pushType: PushType
        let collapseId: String?
        let mapping: WebPushPayload.TemplateMapping
    }

    private var entries: [Entry] = []
    /// Where the next new entry goes once the cache is full (the oldest).
    private var next = 0

    /// The template of this notification, mapped now unless one of the last ``capacity`` was the same.
    mutating func mapping(
        payload: [UInt8], pushType: PushType, collapseId: String?, declarative: Bool, unifiedPush: Bool = false
    ) -> WebPushPayload.TemplateMapping {
        if let hit = entries.first(where: { $0.pushType == pushType && $0.collapseId == collapseId && $0.payload == payload }) {
            return hit.mapping
        }
        let mapping = WebPushPayload.template(
            apnsPayload: payload, pushType: pushType, collapseId: collapseId, declarative: declarative, unifiedPush: unifiedPush)
        let entry = Entry(payload: payload, pushType: pushType, collapseId: collapseId, mapping: mapping)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.capacity
        }
        return mapping
    }
}
