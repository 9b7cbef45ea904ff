import PushSimulator
import Foundation
import PushCore
import PushSecrets

extension SimulatorCommand {
    /// `apps.ID.fcm.serviceAccount` and its path for every app of the configuration file whose FCM endpoint is
    /// `simulator` (none without a file).
    func configuredServiceAccounts() -> [(String, String)] {
        let explicitConfig = global.config != nil || ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] != nil
        guard explicitConfig || FileManager.default.fileExists(atPath: global.configPath),
            let file = try? global.loadConfiguration()
        else { return [] }
        return file.apps.sorted { $0.key < $1.key }.compactMap { id, app in
            guard let fcm = app.fcm, fcm.endpoint == .simulator else { return nil }
            return ("apps.\(id).fcm.serviceAccount", fcm.serviceAccount)
        }
    }

    /// The client ID, secret file and configuration key of every app of the configuration file whose Push Kit
    /// endpoint is `simulator` (none without a file).
    func configuredHMSApps() -> [(clientId: String, secretFile: String, key: String)] {
        let explicitConfig = global.config != nil || ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] != nil
        guard explicitConfig || FileManager.default.fileExists(atPath: global.configPath),
            let file = try? global.loadConfiguration()
        else { return [] }
        return SimulatorHost.hmsApps(file)
    }

    /// The HarmonyOS service-account key files of every app of the configuration file whose endpoint is `simulator`.
    func configuredHarmonyOSAccounts() -> [(path: String, key: String)] {
        let explicitConfig = global.config != nil || ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] != nil
        guard explicitConfig || FileManager.default.fileExists(atPath: global.configPath),
            let file = try? global.loadConfiguration()
        else { return [] }
        return SimulatorHost.harmonyosAccounts(file)
    }

    /// Merges flags over the configuration file (optional: without one the documented defaults apply).
    func makeConfiguration() throws -> SimulatorConfiguration {
        let explicitConfig = global.config != nil || ProcessInfo.processInfo.environment["PUSHCTL_CONFIG"] != nil
        let file: PushConfiguration? =
            explicitConfig || FileManager.default.fileExists(atPath: global.configPath)
            ? try global.loadConfiguration() : nil
        let settings = file?.simulator ?? SimulatorSettings(certificates: absolutePath("Certificates/dev"))
        guard let auth = SimulatorConfiguration.ClientAuth(rawValue: clientAuth) else {
            throw CLIError.usage("--client-auth must be certificate, token, either or none, not '\(clientAuth)'")
        }
        guard let environment = APNsEnvironment(rawValue: self.environment) else {
            throw CLIError.usage("--environment must be development or production, not '\(self.environment)'")
        }
        let port = self.port ?? settings.port
        guard (0...65535).contains(port) else { throw CLIError.usage("--port must be 0…65535") }
        guard maxConcurrentStreams >= 1 else { throw CLIError.usage("--max-concurrent-streams must be at least 1") }
        for (name, value) in [
            ("--delay-fraction", delayFraction), ("--fraction-429", fraction429), ("--fraction-503", fraction503),
            ("--fraction-500", fraction500), ("--fraction-hms-503", fractionHMS503),
        ] where !(0...1).contains(value) {
            throw CLIError.usage("\(name) must be between 0 and 1")
        }
        if let n = goawayAfter, n < 1 { throw CLIError.usage("--goaway-after must be at least 1") }
        guard let excessStreamAnswer = SimulatorFaults.ExcessStreamAnswer(rawValue: excessStream) else {
            throw CLIError.usage("--excess-stream must be refuse, protocol-error or close, not '\(excessStream)'")
        }
        var limitChange: SimulatorFaults.StreamLimitChange?
        if let spec = streamLimitChange {
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard parts.count == 3, let after = parts[0], let limit = parts[1], let count = parts[2], after >= 1, limit >= 1, count >= 1 else {
                throw CLIError.usage("--stream-limit-change must be AFTER:LIMIT:FOR, three numbers of at least 1, not '\(spec)'")
            }
            limitChange = SimulatorFaults.StreamLimitChange(afterStreams: after, limit: limit, forStreams: count)
        }
        if let n = resetAfter, n < 0 { throw CLIError.usage("--reset-after must not be negative") }
        if let n = resetHandshakes, n < 0 { throw CLIError.usage("--reset-handshakes must not be negative") }
        if fcmServiceAccount != nil, auth == .certificate {
            throw CLIError.usage("--fcm-service-account needs --client-auth either, token or none: FCM clients present no certificate")
        }
        guard (1...86_400).contains(accessTokenLifetime) else { throw CLIError.usage("--access-token-lifetime must be 1-86400 seconds") }
        guard delayMs >= 0 else { throw CLIError.usage("--delay-ms must not be negative") }
        if let rate = answersPerSecond, !(1...1_000_000).contains(rate) {
            throw CLIError.usage("--answers-per-second must be 1-1000000")
        }
        guard maxChannels >= 0 else { throw CLIError.usage("--max-channels must not be negative") }
        guard (0...1000).contains(readPacingMs) else { throw CLIError.usage("--read-pacing-ms must be 0-1000") }
        if let empty = broadcastDisabled.first(where: { $0.isEmpty }) {
            throw CLIError.usage("--broadcast-disabled needs a bundle id, not '\(empty)'")
        }

        let directory = certificates.map(absolutePath) ?? settings.certificates
        let pem: (ca: String?, certificate: String, key: String)
        do { pem = try SimulatorConfiguration.pemFiles(in: directory) } catch { throw CLIError.usage(error.message) }
        if auth == .certificate || auth == .either, pem.ca == nil {
            throw CLIError.usage("cannot read \(directory)/ca.pem, needed for certificate client auth")
        }

        var keys: [SimulatorJWTKey] = []
        for spec in jwtKey {
            let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { throw CLIError.usage("--jwt-key must be KEYID:TEAMID:FILE, not '\(spec)'") }
            guard let data = FileManager.default.contents(atPath: absolutePath(parts[2])) else {
                throw CLIError.usage("cannot read provider-token key \(parts[2])")
            }
            keys.append(SimulatorJWTKey(keyId: parts[0], teamId: parts[1], publicKeyPEM: String(decoding: data, as: UTF8.self)))
        }
        // Token-auth apps pointed at the simulator just work.
        for (_, app) in file?.apps.sorted(by: { $0.key < $1.key }) ?? [] {
            guard let apns = app.apns, apns.endpoint == .simulator, case .token(let p8, let keyId, let teamId) = apns.auth,
                let data = try? SecretFileLoader.read(p8, name: ".p8 key")
            else { continue }
            keys.append(SimulatorJWTKey(keyId: keyId, teamId: teamId, publicKeyPEM: String(decoding: data, as: UTF8.self)))
        }

        var deviceMap: [DeviceToken: DeviceBehaviour] = [:]
        if let devices {
            guard let data = FileManager.default.contents(atPath: absolutePath(devices)) else {
                throw CLIError.usage("cannot read devices file \(devices)")
            }
            do { deviceMap = try DeviceBehaviourFile.parse(Array(data)) } catch { throw CLIError.usage(error.message) }
        }
        var faults = SimulatorFaults(
            goAwayAfterStreams: goawayAfter, dropStreamLimitAfterRejection: dropStreamLimit,
            resetAfterRequests: resetAfter, responseDelay: .milliseconds(delayMs), delayFraction: delayFraction,
            tooManyRequestsFraction: fraction429, serviceUnavailableFraction: fraction503,
            internalServerErrorFraction: fraction500, blackHole: blackHole,
            resetHandshakes: resetHandshakes ?? 0)
        faults.excessStream = excessStreamAnswer
        faults.answersPerSecond = answersPerSecond
        faults.streamLimitChange = limitChange
        faults.hmsFlowControlFraction = fractionHMS503
        var configuration = SimulatorConfiguration(
            host: host ?? settings.host, port: port, caPEM: pem.ca, serverCertificatePEM: pem.certificate,
            serverKeyPEM: pem.key, clientAuth: auth, jwtKeys: keys, environment: environment,
            maxConcurrentStreams: maxConcurrentStreams, recordFile: record.map(absolutePath), faults: faults,
            devices: deviceMap, maxChannelsPerBundleId: maxChannels, broadcastDisabledBundleIds: Set(broadcastDisabled))
        configuration.readPacing = .milliseconds(readPacingMs)
        configuration.dateSkewSeconds = dateSkewSeconds
        configuration.accessTokenLifetime = accessTokenLifetime
        guard (1...86_400).contains(hmsAccessTokenLifetime) else { throw CLIError.usage("--hms-access-token-lifetime must be 1-86400 seconds") }
        configuration.hmsAccessTokenLifetime = hmsAccessTokenLifetime
        if let n = hmsExpireTokensAfter, n < 1 { throw CLIError.usage("--hms-expire-tokens-after must be at least 1") }
        if let hmsInvalid {
            guard let data = FileManager.default.contents(atPath: absolutePath(hmsInvalid)) else {
                throw CLIError.usage("cannot read --hms-invalid file \(hmsInvalid)")
            }
            configuration.hmsInvalidTokens = Set(
                String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        if let harmonyosInvalid {
            guard let data = FileManager.default.contents(atPath: absolutePath(harmonyosInvalid)) else {
                throw CLIError.usage("cannot read --harmonyos-invalid file \(harmonyosInvalid)")
            }
            configuration.harmonyosInvalidTokens = Set(
                String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        if let fcmUnregistered {
            guard let data = FileManager.default.contents(atPath: absolutePath(fcmUnregistered)) else {
                throw CLIError.usage("cannot read --fcm-unregistered file \(fcmUnregistered)")
            }
            configuration.fcmUnregisteredTokens = Set(
                String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return configuration
    }
}
