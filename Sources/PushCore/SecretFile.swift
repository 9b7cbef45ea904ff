/// A file the configuration names that holds a secret: a .p12 or .p8, a password, proxy credentials, a webhook or
/// user secret, a VAPID key or an FCM service account, with the key that names it (for errors).
///
/// Only a description: PushCore does no I/O. The rules a secret file is held to (a regular file, readable by no other
/// user, at most 1 MiB, the first-line rule) are PushSecrets' `SecretFileLoader`, the one code that opens them.
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
}
