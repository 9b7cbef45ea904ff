extension AppSettings {
    /// Why this app cannot send Live Activity pushes to device tokens, or nil when it can. APNs takes them only on
    /// token-based (.p8) connections: on a certificate connection it answers 400 TopicDisallowed. (Broadcast
    /// channels and their management API accept either.)
    public var liveActivityProblem: String? {
        guard case .certificate = auth else { return nil }
        return "Live Activity pushes need token-based authentication: APNs refuses them on certificate connections "
            + "(TopicDisallowed); give the app a .p8 key (auth: {\"p8\", \"keyId\", \"teamId\"})"
    }
}
