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
