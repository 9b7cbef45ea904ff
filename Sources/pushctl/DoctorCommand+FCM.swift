import Foundation
import PushCore
import PushSender

extension DoctorCommand {
    /// An app's FCM checks: the service account as the sender loads it (a secret file: its mode, JSON, RSA key,
    /// project id), then one real grant from the token endpoint the sender would ask (Google's `token_uri`, or the
    /// simulator's `/token`), so a deleted key or an account the endpoint does not know fails here, not at a send.
    static func fcm(_ id: String, _ fcm: FCMSettings, in config: PushConfiguration, of app: AppSettings) async -> [Check] {
        let name = "app \(id) fcm account"
        let account: FCMServiceAccount
        do { account = try FCMServiceAccount(path: fcm.serviceAccount, configurationKey: "apps.\(id).fcm.serviceAccount") } catch {
            return [Check(
                name: name, status: .fail,
                detail: "\(error.message) (download the account's JSON key from the Firebase console, Project settings → "
                    + "Service accounts, and chmod 600 it; or `pushctl fcm account new` for the simulator)")]
        }
        var checks = [Check(
            name: name, status: .ok,
            detail: "\(fcm.serviceAccount): project \(account.projectId), \(account.clientEmail), readable by no other user")]
        let target = FCMSender.target(for: fcm, simulator: config.simulator)
        let tokenURI = FCMSender.tokenURI(for: fcm, account: account, target: target)
        let proxy = try? config.proxy(for: app).map { try SenderProxy($0) }
        let grantName = "app \(id) fcm grant"
        do {
            let grant = try await AccessTokenCache.requestGrant(
                account: account.postingGrants(to: tokenURI), issuedAt: Date(), caFile: target.caFile, proxy: proxy)
            checks.append(Check(
                name: grantName, status: .ok,
                detail: "\(tokenURI) granted an access token for project \(account.projectId) (lifetime \(Int(grant.expiresIn)) s)"))
        } catch let error as CredentialError {
            checks.append(Check(
                name: grantName, status: .fail,
                detail: "\(error.message) (the token endpoint does not accept this account's key: a deleted or disabled key, "
                    + "or another project's account; make a new key for the project's Firebase service account)"))
        } catch {
            checks.append(Check(
                name: grantName, status: .fail,
                detail: "\(tokenURI): \((error as? TransportError)?.message ?? "\(error)") (the token endpoint did not answer: "
                    + "the network, a proxy (apps.\(id).proxy), or its trust (apps.\(id).fcm.caFile))"))
        }
        return checks
    }
}
