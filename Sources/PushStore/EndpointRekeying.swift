import PushCore

/// The migration that gives every stored Web Push device the key of its endpoint's canonical form
/// (``WebPushEndpoint/url``), the same plan on both backends. Before it, `HTTPS://Host:443/x` and `https://host/x`
/// were stored as two devices (their keys hash the endpoint as the browser wrote it) and the same subscription got
/// two pushes. Each group of rows of one app that now share a key is merged into one: the most recently registered
/// row survives whole (its fields, channels and installation win, as a new registration's would) and takes the
/// canonical key and subscription text; the others are deleted. A subscription that no longer parses (a dot segment,
/// now refused) is left as it was: it cannot be sent to either way.
enum EndpointRekeying {
    /// A stored Web Push device.
    struct Row: Equatable {
        var id: Int64
        var app: String
        var token: String
        var subscription: String?
        var lastRegisteredMs: Int64
    }

    /// What to write: delete `deletes` first (a survivor may take a deleted row's key), then give each update's
    /// device its new key and subscription text.
    struct Plan: Equatable {
        var deletes: [Int64] = []
        var updates: [Update] = []
        var isEmpty: Bool { deletes.isEmpty && updates.isEmpty }
    }

    struct Update: Equatable {
        var id: Int64
        var token: String
        var subscription: String
    }

    static func plan(_ rows: [Row]) -> Plan {
        struct Canonical {
            var row: Row
            var token: String
            var subscription: String
        }
        var groups: [String: [Canonical]] = [:]
        var order: [String] = []
        for row in rows {
            let (_, parsed, _) = StoredSubscription.decode(service: PushService.webpush.rawValue, subscription: row.subscription)
            guard let parsed, let text = StoredSubscription.encode(parsed) else { continue }
            let token = DeviceKey.of(parsed).hex
            let group = row.app + "\u{0}" + token
            if groups[group] == nil { order.append(group) }
            groups[group, default: []].append(Canonical(row: row, token: token, subscription: text))
        }
        var plan = Plan()
        for group in order {
            let members = groups[group]!
            // The newest registration wins; on a tie the row already under the canonical key, then the newest id.
            let survivor = members.max { a, b in
                (a.row.lastRegisteredMs, a.row.token == a.token ? 1 : 0, a.row.id)
                    < (b.row.lastRegisteredMs, b.row.token == b.token ? 1 : 0, b.row.id)
            }!
            for m in members where m.row.id != survivor.row.id { plan.deletes.append(m.row.id) }
            if survivor.row.token != survivor.token {
                plan.updates.append(Update(id: survivor.row.id, token: survivor.token, subscription: survivor.subscription))
            }
        }
        return plan
    }
}
