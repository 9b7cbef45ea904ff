import Foundation
import PushCore
import PushSender

extension DoctorCommand {
    /// An app's Huawei Push Kit checks: the client secret as the sender loads it (a secret file: its mode, not empty),
    /// then one real client-credentials grant from the token endpoint the sender would ask (Huawei's OAuth host, or
    /// the simulator's), so a wrong secret or client ID fails here, not at a send.
    static func hms(_ id: String, _ hms: HMSSettings, in config: PushConfiguration, of app: AppSettings) async -> [Check] {
        let name = "app \(id) hms credentials"
        let target = HMSSender.target(for: hms, simulator: config.simulator)
        let tokenURL = HMSSender.tokenURL(for: hms, target: target)
        let credentials: HMSClientCredentials
        do {
            credentials = try HMSClientCredentials(
                clientId: hms.clientId, secretFile: hms.clientSecretFile, tokenURL: tokenURL,
                configurationKey: "apps.\(id).hms.clientSecretFile")
        } catch {
            return [Check(
                name: name, status: .fail,
                detail: "\(error.message) (copy the client secret from AppGallery Connect, Project settings → App "
                    + "information, into the file on one line, and chmod 600 it)")]
        }
        var checks = [Check(
            name: name, status: .ok, detail: "client \(hms.clientId), secret in \(hms.clientSecretFile), readable by no other user")]
        if hms.defaultTitle == nil {
            checks.append(Check(
                name: "app \(id) hms title", status: .warn,
                detail: "apps.\(id).hms.defaultTitle is not set: an alert without a title (a string alert) is not sent to HMS devices, "
                    + "as Push Kit shows no notification without one"))
        }
        let proxy = try? config.proxy(for: app).map { try SenderProxy($0) }
        let grantName = "app \(id) hms grant"
        do {
            let grant = try await AccessTokenCache.postGrant(
                url: tokenURL, body: Array(credentials.grantRequestBody.utf8), caFile: target.caFile, proxy: proxy)
            checks.append(Check(
                name: grantName, status: .ok,
                detail: "\(tokenURL) granted an access token for client \(hms.clientId) (lifetime \(Int(grant.expiresIn)) s)"))
        } catch let error as CredentialError {
            checks.append(Check(
                name: grantName, status: .fail,
                detail: "\(error.message) (Huawei does not accept this client ID and secret: check both in AppGallery Connect)"))
        } catch {
            checks.append(Check(
                name: grantName, status: .fail,
                detail: "\(tokenURL): \((error as? TransportError)?.message ?? "\(error)") (the token endpoint did not answer: "
                    + "the network, a proxy (apps.\(id).proxy), or its trust (apps.\(id).hms.caFile))"))
        }
        return checks
    }
}
