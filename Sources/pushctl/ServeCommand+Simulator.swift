import PushSimulator
import Foundation
import Logging
import PushCore
import PushSecrets
import PushServer

/// Starts the built-in simulator inside `pushctl serve` when an app's endpoint is `simulator`.
enum SimulatorHost {
    /// The running simulator, or nil when no app uses it (APNs, FCM or HMS with the endpoint `simulator`, Web Push with
    /// the simulator among its allowed hosts, UnifiedPush with it among its exempt hosts). It
    /// trusts the service account of every app whose FCM endpoint is `simulator` (docs/fcm.md): its token endpoint
    /// grants them access tokens as Google's would.
    /// How many notifications the console's development inbox keeps (every service together, newest first).
    static let inboxLimit = 1000

    /// The apps whose Push Kit endpoint is `simulator`: their client ID, secret file and its configuration key. The
    /// simulator trusts each one's client credentials, as Huawei's OAuth endpoint knows every app's.
    static func hmsApps(_ config: PushConfiguration) -> [(clientId: String, secretFile: String, key: String)] {
        config.apps.sorted { $0.key < $1.key }.compactMap { id, app in
            guard let hms = app.hms, hms.endpoint == .simulator else { return nil }
            return (hms.clientId, hms.clientSecretFile, "apps.\(id).hms.clientSecretFile")
        }
    }

    /// The apps whose HarmonyOS Push Kit endpoint is `simulator`: their service-account key file and its
    /// configuration key. The simulator trusts each one's JWTs, as Huawei knows every service account's public key.
    static func harmonyosAccounts(_ config: PushConfiguration) -> [(path: String, key: String)] {
        config.apps.sorted { $0.key < $1.key }.compactMap { id, app in
            guard let harmonyos = app.harmonyos, harmonyos.endpoint == .simulator else { return nil }
            return (harmonyos.serviceAccount, "apps.\(id).harmonyos.serviceAccount")
        }
    }

    /// Trusts the HarmonyOS service accounts of `accounts` (a file that cannot be read is left to the sender, which
    /// says why when the app sends); `report` gets a line per account.
    static func trustHarmonyOS(_ accounts: [(path: String, key: String)], in simulator: PushSimulator, report: (String) -> Void) {
        for (path, key) in accounts {
            do {
                let data = try SecretFileLoader.read(path, name: key)
                simulator.trustHarmonyOSAccount(try SimulatorHarmonyOSAccount(keyFileJSON: data, source: path))
                report("simulator: HarmonyOS service account from \(key) (\(path))")
            } catch let error as SecretFileError {
                report("simulator: not trusting \(key): \(error.message)")
            } catch {
                report("simulator: not trusting \(key): \((error as? SimulatorError)?.message ?? "\(error)")")
            }
        }
    }

    static func startIfNeeded(config: PushConfiguration, record: String? = nil, logger: Logger) async throws -> PushSimulator? {
        let apps = config.apps.values.compactMap { $0.apns?.endpoint == .simulator ? $0.apns : nil }
        let webApps = config.apps.values.filter { $0.webPush?.allowedHosts.contains(config.simulator.hostAndPort) == true }
        let fcmAccounts = config.apps.sorted { $0.key < $1.key }.compactMap { id, app -> (String, String)? in
            guard let fcm = app.fcm, fcm.endpoint == .simulator else { return nil }
            return ("apps.\(id).fcm.serviceAccount", fcm.serviceAccount)
        }
        let hmsApps = SimulatorHost.hmsApps(config)
        let harmonyosAccounts = SimulatorHost.harmonyosAccounts(config)
        // UnifiedPush: an app that exempts the simulator's host:port from the address check sends to its distributor.
        let unifiedPushApps = config.apps.values.filter { $0.unifiedPush?.exemptHosts.contains(config.simulator.hostAndPort) == true }
        guard !apps.isEmpty || !fcmAccounts.isEmpty || !webApps.isEmpty || !hmsApps.isEmpty || !harmonyosAccounts.isEmpty
            || !unifiedPushApps.isEmpty
        else { return nil }
        let pem: (ca: String?, certificate: String, key: String)
        do { pem = try SimulatorConfiguration.pemFiles(in: config.simulator.certificates) } catch {
            throw CLIError.usage("\(error.message) (run `make certs` or `pushctl cert make-dev --out \(config.simulator.certificates) --topic TOPIC`)")
        }
        // As APNs' hosts, the simulator takes certificate (.p12) and token (.p8) apps side by side (`either`): a
        // connection with a client certificate is judged by it, one without by its provider token. Token mode
        // alone only when there is no CA to check certificates against.
        var keys: [SimulatorJWTKey] = []
        for app in apps {
            // A .p8 that cannot be read is left to the sender, which says why when the app sends.
            if case .token(let p8, let keyId, let teamId) = app.auth, let data = try? SecretFileLoader.read(p8, name: ".p8 key") {
                keys.append(SimulatorJWTKey(keyId: keyId, teamId: teamId, publicKeyPEM: String(decoding: data, as: UTF8.self)))
            }
        }
        let tokenOnly = keys.count == apps.count && pem.ca == nil
        var configuration = SimulatorConfiguration(
            host: config.simulator.host, port: config.simulator.port, caPEM: pem.ca,
            serverCertificatePEM: pem.certificate, serverKeyPEM: pem.key,
            clientAuth: tokenOnly ? .token : .either, jwtKeys: keys, recordFile: record)
        configuration.inboxLimit = inboxLimit
        let simulator: PushSimulator
        do { simulator = try PushSimulator(configuration: configuration) } catch {
            throw CLIError.usage(error.message)
        }
        for (key, path) in fcmAccounts {
            // A file that cannot be read is left to the FCM sender, which says so when the app sends (as for the other
            // secret files).
            let data: [UInt8]
            do { data = try SecretFileLoader.read(path, name: key) } catch {
                logger.warning("\(error.message); the simulator does not trust it")
                continue
            }
            do { try simulator.trustServiceAccount(try SimulatorServiceAccount(serviceAccountJSON: data, source: path)) } catch {
                throw CLIError.usage("\(key): \(error.message)")
            }
        }
        for app in hmsApps {
            // As for FCM: a secret that cannot be read is left to the sender, which says why when the app sends.
            do { simulator.trustHMSApp(clientId: app.clientId, secret: try SecretFileLoader.readFirstLine(app.secretFile, name: app.key)) } catch {
                logger.warning("\(error.message); the simulator does not trust it")
            }
        }
        SimulatorHost.trustHarmonyOS(harmonyosAccounts, in: simulator) { line in
            if line.contains("not trusting") { logger.warning("\(line)") }
        }
        do {
            _ = try await simulator.start()
        } catch {
            throw CLIError(code: 1, message: "cannot start the simulator: \((error as? SimulatorError)?.message ?? "\(error)")")
        }
        logger.info("simulator (APNs, Web Push, FCM, Push Kit) listening on \(config.simulator.host):\(simulator.port ?? 0)")
        return simulator
    }
}

/// The built-in simulator is the development inbox of the server it runs in (the console's Inbox tab).
extension PushSimulator: DevelopmentInbox {}
