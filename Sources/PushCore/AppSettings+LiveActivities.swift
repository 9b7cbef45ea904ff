extension AppSettings {
    /// Why this app cannot send Live Activity pushes to device tokens, or nil when it can. Live Activities are an
    /// APNs feature, and APNs takes them only on token-based (.p8) connections: on a certificate connection it
    /// answers 400 TopicDisallowed. (Broadcast channels and their management API accept either.)
    public var liveActivityProblem: String? {
        guard let apns else {
            return "Live Activities are sent through APNs, and this app has no apns service (apps.ID.apns)"
        }
        guard case .certificate = apns.auth else { return nil }
        return "Live Activity pushes need token-based authentication: APNs refuses them on certificate connections "
            + "(TopicDisallowed); give the app a .p8 key (auth: {\"p8\", \"keyId\", \"teamId\"})"
    }
}
