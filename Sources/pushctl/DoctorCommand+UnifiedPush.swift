import PushCore
import PushSender

extension DoctorCommand {
    /// An app's UnifiedPush checks: the VAPID key as the sender loads it (a secret file: its mode, readable, a P-256
    /// key), the subject, and what is exempt from the address check. No distributor is probed: each user picks their
    /// own, and the sender judges every distributor's address when it connects.
    static func unifiedPush(_ id: String, _ up: UnifiedPushSettings) -> [Check] {
        var checks: [Check] = []
        let key = "app \(id) unifiedpush key"
        do {
            let signer = try VAPIDSigner(pemPath: up.vapidKey, configKey: "apps.\(id).unifiedpush.vapidKey", subject: up.subject)
            checks.append(Check(
                name: key, status: .ok,
                detail: "\(up.vapidKey): a P-256 key, readable by no other user; apps register with their distributor with its "
                    + "public key (the vapid) \(signer.publicKey.prefix(12))… (GET /v1/apps/\(id)/unifiedpush/key gives it whole)"))
        } catch {
            checks.append(Check(
                name: key, status: .fail,
                detail: "\(error.message) (make one with `pushctl webpush key new --out FILE`, or point it at the app's Web Push "
                    + "key; a new key orphans the endpoints registered with the old one)"))
        }
        if let problem = WebPushSettings.subjectProblem(up.subject) {
            checks.append(Check(name: "app \(id) unifiedpush subject", status: .fail, detail: "\(up.subject): \(problem)"))
        } else {
            checks.append(Check(
                name: "app \(id) unifiedpush subject", status: .ok, detail: "\(up.subject) (distributors contact it about this sender)"))
        }
        let exempt = up.exemptHosts.isEmpty ? "none" : up.exemptHosts.joined(separator: ", ")
        checks.append(Check(
            name: "app \(id) unifiedpush distributors", status: .ok,
            detail: "not probed: each user picks their own distributor, whose address is checked at registration (discovery) "
                + "and on every connection; exempt from the address check: \(exempt)"))
        return checks
    }
}
