extension APNsReason {
    /// A notification that ended without an APNs answer (unreachable, TLS, dropped connections).
    public static let transportErrorLabel = "transportError"
    /// An APNs answer with a reason this version does not know.
    public static let unknownLabel = "unknown"

    /// The bounded form of a delivery's stored reason, for counters and metric labels: "" for none, Apple's
    /// reason when this version knows it, else ``transportErrorLabel`` (HTTP status 0: no answer; the stored
    /// reason is then the transport's error text) or ``unknownLabel``.
    public static func label(status: Int, reason: String?) -> String {
        guard let reason, !reason.isEmpty else { return "" }
        if case .unknown = APNsReason(rawValue: reason) {
            return status == 0 ? transportErrorLabel : unknownLabel
        }
        return reason
    }
}
