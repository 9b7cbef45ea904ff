import Foundation
import PushCore
import PushSender

extension DoctorCommand {
    /// An app's HarmonyOS Push Kit checks: the service-account key file as the sender loads it (a secret file: its
    /// mode; its fields and RSA key), that its `project_id` is the app's `projectId`, and one JWT signed with it. There
    /// is no token endpoint to ask (the JWT is the bearer itself), so nothing is sent: a key Huawei does not know shows
    /// at the first send (`80200001`, stopping the app's HarmonyOS sending by name).
    static func harmonyos(_ id: String, _ harmonyos: HarmonyOSSettings) -> [Check] {
        let name = "app \(id) harmonyos credentials"
        let account: HarmonyOSServiceAccount
        do {
            account = try HarmonyOSServiceAccount(path: harmonyos.serviceAccount, configurationKey: "apps.\(id).harmonyos.serviceAccount")
        } catch {
            return [Check(
                name: name, status: .fail,
                detail: "\(error.message) (download the service-account key file from the API Console, Credentials → Service account key, and chmod 600 it)")]
        }
        var checks: [Check] = []
        do {
            _ = try account.jwt(issuedAt: Date())
            checks.append(Check(
                name: name, status: .ok,
                detail: "service account \(account.subAccount) (key \(account.keyId)) in \(harmonyos.serviceAccount), readable by no other user; signs PS256 JWTs"))
        } catch {
            checks.append(Check(name: name, status: .fail, detail: error.message))
        }
        if account.projectId != harmonyos.projectId {
            checks.append(Check(
                name: "app \(id) harmonyos project", status: .warn,
                detail: "the key file's project_id \(account.projectId) is not apps.\(id).harmonyos.projectId \(harmonyos.projectId): Huawei refuses a key of another project (80200001)"))
        }
        checks.append(Check(
            name: "app \(id) harmonyos category", status: harmonyos.category == "MARKETING" ? .warn : .ok,
            detail: harmonyos.category == "MARKETING"
                ? "category MARKETING: Push Kit shows these silently and caps them at 2 or 5 per device per day"
                : "category \(harmonyos.category) (needs Huawei's self-classification right for the app)"))
        if harmonyos.defaultTitle == nil {
            checks.append(Check(
                name: "app \(id) harmonyos title", status: .warn,
                detail: "apps.\(id).harmonyos.defaultTitle is not set: an alert without a title (a string alert) is not sent to HarmonyOS devices, "
                    + "as Push Kit requires one"))
        }
        return checks
    }
}
