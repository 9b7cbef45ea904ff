/// A file the configuration names that holds a secret: a .p12 or .p8, a password, proxy credentials or a webhook
/// signing secret.
///
/// The policy, as OpenSSH applies it to private keys: a secret file that other users may read (or write) is
/// refused, because anyone on the machine could take or replace the credential; the group may read it, so the
/// files can be `root:pushprovider 0640` and the service's group read them without owning them.
public struct SecretFile: Sendable, Equatable {
    /// The configuration key that names it, e.g. `apps.example.auth.passwordFile`.
    public var key: String
    /// The path, as resolved from the configuration.
    public var path: String

    /// Creates a description of one secret file.
    public init(key: String, path: String) {
        self.key = key
        self.path = path
    }

    /// The permission bits that refuse a secret file: any access for others (not owner, not group).
    public static let forbiddenBits: UInt32 = 0o007

    /// Why a file with permission bits `mode` must not be used, or nil when it may. One line naming the file and
    /// the fix.
    public func refusal(mode: UInt32) -> String? {
        let permissions = mode & 0o7777
        guard permissions & Self.forbiddenBits != 0 else { return nil }
        let octal = String(permissions, radix: 8)
        return "\(key): \(path) is accessible by other users (mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); "
            + "run chmod 600 \(path) (or chmod 640 to let the service's group read it)"
    }
}

extension PushConfiguration {
    /// Every secret file this configuration names, in a stable order (the database password, the global proxy's
    /// credentials, then each app by id: its .p12 and password or its .p8, its proxy's credentials, its webhook
    /// secret). Secrets from environment variables are not files and are not listed.
    public var secretFiles: [SecretFile] {
        var files: [SecretFile] = []
        if let file = databasePasswordFile { files.append(SecretFile(key: "databasePasswordFile", path: file)) }
        if case .file(let path) = proxy?.credentials { files.append(SecretFile(key: "proxyCredentialsFile", path: path)) }
        for (id, app) in apps.sorted(by: { $0.key < $1.key }) {
            let at = "apps.\(id)"
            switch app.auth {
            case .certificate(let p12, let password):
                files.append(SecretFile(key: "\(at).auth.p12", path: p12))
                if case .file(let path) = password { files.append(SecretFile(key: "\(at).auth.passwordFile", path: path)) }
            case .token(let p8, _, _):
                files.append(SecretFile(key: "\(at).auth.p8", path: p8))
            }
            if case .file(let path) = app.proxy?.credentials {
                files.append(SecretFile(key: "\(at).proxyCredentialsFile", path: path))
            }
            if case .file(let path) = app.webhook?.secret {
                files.append(SecretFile(key: "\(at).webhook.secretFile", path: path))
            }
        }
        return files
    }
}
