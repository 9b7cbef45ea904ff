import PushSimulator
import Foundation
import PushSecrets
#if canImport(Glibc)
import Glibc
#endif

extension SimulatorCommand {
    /// `--fcm-service-account FILE`: trusts the account in FILE, first writing a new development account there (a
    /// fresh RSA 2048 key, Google's JSON format, `token_uri` = the running simulator's `/token`, mode 0600, never
    /// over an existing file) when there is none. Returns the line to print, naming the file as `shown`.
    /// An existing FILE is a secret file, read through ``SecretFileLoader`` (refused when other users may read it).
    static func trustServiceAccount(file: String, shown: String, simulator: PushSimulator) throws -> String {
        let existing: [UInt8]?
        do { existing = try SecretFileLoader.read(file, name: "--fcm-service-account") } catch where error.kind == .missing {
            existing = nil
        } catch {
            throw CLIError.usage(error.message)
        }
        if let data = existing {
            let account: SimulatorServiceAccount
            do {
                account = try SimulatorServiceAccount(serviceAccountJSON: data, source: file)
                try simulator.trustServiceAccount(account)
            } catch { throw CLIError.usage(error.message) }
            return "simulator: FCM service account \(account.clientEmail) from \(shown) (token_uri \(account.tokenURI ?? "none"))"
        }
        let made: (account: SimulatorServiceAccount, json: String)
        do {
            made = try SimulatorServiceAccount.makeDevelopment(tokenURI: simulator.tokenURI)
            try simulator.trustServiceAccount(made.account)
        } catch { throw CLIError.usage(error.message) }
        try createSecretFile(file, contents: made.json)
        return "simulator: wrote FCM service account \(made.account.clientEmail) to \(shown) (token_uri \(simulator.tokenURI))"
    }

    /// Writes a new secret file (a service account's JSON): O_EXCL, never over a file that appeared meanwhile; mode
    /// 0600 from the start, as it holds a private key.
    static func createSecretFile(_ file: String, contents: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError.usage("cannot create \(file): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let closed = close(fd)
        guard written == bytes.count, closed == 0 else {
            unlink(file)
            throw CLIError.usage("cannot write \(file)")
        }
    }
}
