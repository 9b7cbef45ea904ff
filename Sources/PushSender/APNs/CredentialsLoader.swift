import Foundation
import PushCore

/// Turns an app's configured APNs `auth` into a ``CredentialProvider``.
public enum CredentialsLoader {
    /// Loads the app's APNs credentials: a .p12 (password from `passwordFile` or `passwordEnv`) as
    /// ``CertificateCredentials`` or a .p8 as ``TokenCredentials``. Fails, naming the file or variable, when
    /// anything is missing or wrong, or when the certificate is expired or not yet valid.
    /// - Parameters:
    ///   - now: the clock the credentials use from now on (validity checks, token ages).
    ///   - environment: where `passwordEnv` variables are looked up. Default: the process environment.
    public static func makeCredentials(
        for apns: APNsSettings, now: @escaping @Sendable () -> Date = { Date() },
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(CredentialError) -> any CredentialProvider {
        switch apns.auth {
        case .certificate(let p12, let source):
            let password = try password(from: source, environment: environment)
            return try CertificateCredentials(p12Path: p12, password: password, now: now)
        case .token(let p8, let keyId, let teamId):
            return try TokenCredentials(p8Path: p8, keyId: keyId, teamId: teamId, now: now)
        }
    }

    /// The password from a file (its first line: ``SecretFileLoader/firstLine(of:)``, the rule every one-line
    /// secret follows) or an environment variable. The password itself never appears in errors.
    public static func password(from source: PasswordSource, environment: [String: String]) throws(CredentialError) -> String {
        switch source {
        case .file(let path):
            return try CredentialFiles.firstLine(path, name: "password file")
        case .environment(let name):
            guard let value = environment[name] else {
                throw CredentialError(.missingPassword, "environment variable \(name) (the .p12 password) is not set")
            }
            return value
        }
    }
}

/// `CredentialsLoader.makeCredentials(for:now:environment:)` with the process environment.
public func makeCredentials(for apns: APNsSettings, now: @escaping @Sendable () -> Date = { Date() })
    throws(CredentialError) -> any CredentialProvider
{
    try CredentialsLoader.makeCredentials(for: apns, now: now)
}
