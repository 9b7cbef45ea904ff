/// Why ``SecretFileLoader`` refused a secret file. The message is one line that names the file (and the
/// configuration key when the caller gave it), never its contents; callers map the kind onto their own error
/// types (`CredentialError`, `StoreError`, a usage error) and keep the message.
public struct SecretFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Kind: Sendable, Equatable {
        /// Nothing is at the path (`ENOENT`, a dangling symlink included).
        case missing
        /// It is there but could not be opened or read (permissions, I/O).
        case unreadable
        /// It is a directory, a FIFO, a device or a socket: no secret file is one.
        case notRegularFile
        /// Other users may read or write it (``SecretFileLoader/forbiddenBits``).
        case exposed
        /// It is larger than ``SecretFileLoader/sizeLimit``.
        case tooLarge
        /// A secret read as text (a password, a first line) is not UTF-8.
        case notText
    }

    /// What is wrong.
    public let kind: Kind
    /// The path as given.
    public let path: String
    /// One line for the operator: the name, the path, what is wrong and, for a mode, the fix.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
