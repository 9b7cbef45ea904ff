import Foundation

/// One Live Activity call waiting in the outbox. Unlike the device's registration (one state, diffed), these are
/// separate requests about separate things, so they are kept in order — and a newer change about the same thing
/// supersedes an older one that was never sent (ActivityKit may rotate a token three times while offline: only the
/// last is worth sending).
public struct LiveActivityChange: Sendable, Equatable, Codable, Identifiable {
    /// What the change does.
    public enum Kind: Sendable, Equatable, Codable {
        /// `POST …/live-activities/push-to-start-tokens`: this installation's push-to-start token for a type.
        case pushToStartToken(token: String, attributesType: String, channels: [String])
        /// `POST …/live-activities/update-tokens`: an activity's update token.
        case updateToken(token: String, activityId: String, attributesType: String?)
        /// `DELETE …/live-activities/activities/{id}`: the activity ended on the device.
        case activityEnded(activityId: String)
    }

    /// A stable id (the outbox removes a sent change by it, even if others were queued meanwhile).
    public var id: UUID
    /// The change.
    public var kind: Kind

    /// Creates one.
    public init(id: UUID = UUID(), kind: Kind) {
        self.id = id
        self.kind = kind
    }

    /// True when sending `newer` makes sending `self` pointless: a push-to-start token for the same type (the
    /// server keeps one per installation and type), an update token for the same activity, or anything about an
    /// activity that has since ended (its update tokens are removed when the end is reported).
    func isSuperseded(by newer: LiveActivityChange) -> Bool {
        switch (kind, newer.kind) {
        case (.pushToStartToken(_, let a, _), .pushToStartToken(_, let b, _)): return a == b
        case (.updateToken(_, let a, _), .updateToken(_, let b, _)): return a == b
        case (.updateToken(_, let a, _), .activityEnded(let b)): return a == b
        case (.activityEnded(let a), .activityEnded(let b)): return a == b
        default: return false
        }
    }

    /// The outbox with `change` appended and every change it supersedes removed (the rest keep their order).
    static func enqueue(_ change: LiveActivityChange, into outbox: [LiveActivityChange]) -> [LiveActivityChange] {
        outbox.filter { !$0.isSuperseded(by: change) } + [change]
    }

    /// The API request for this change: method, path under `/v1/apps/{app}/`, JSON body, and the statuses that
    /// also mean done (a 404 for an ended activity: the server has no update token for it — never sent, or gone).
    func request(installationId: String, environment: APNsEnvironment?) throws
        -> (method: String, path: [String], body: Data?, doneStatuses: Set<Int>)
    {
        struct PushToStart: Encodable {
            let token: String, installation: String, attributesType: String, channels: [String]?, environment: String?
        }
        struct Update: Encodable {
            let token: String, activityId: String, attributesType: String?, environment: String?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        switch kind {
        case .pushToStartToken(let token, let type, let channels):
            let body = PushToStart(
                token: token, installation: installationId, attributesType: type,
                channels: channels.isEmpty ? nil : channels, environment: environment?.rawValue)
            return ("POST", ["live-activities", "push-to-start-tokens"], try encoder.encode(body), [])
        case .updateToken(let token, let activityId, let type):
            let body = Update(token: token, activityId: activityId, attributesType: type, environment: environment?.rawValue)
            return ("POST", ["live-activities", "update-tokens"], try encoder.encode(body), [])
        case .activityEnded(let activityId):
            return ("DELETE", ["live-activities", "activities", activityId], nil, [404])
        }
    }
}
