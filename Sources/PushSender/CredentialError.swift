import PushSecrets

/// A credential problem: unreadable or malformed files, a wrong .p12 password, an expired certificate, or an
/// OpenSSL failure (whose message then includes OpenSSL's own error text).
public struct CredentialError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Sendable, Equatable, CustomStringConvertible {
        /// A file could not be read or written.
        case io
        /// The input is not what it should be (not a certificate, not a P-256 key, bad key id, …).
        case invalidInput
        /// The .p12 MAC did not verify: wrong password or a corrupt file.
        case wrongPassword
        /// The certificate's notAfter is in the past.
        case expired
        /// The certificate's notBefore is in the future.
        case notYetValid
        /// The password source (file or environment variable) is missing or empty.
        case missingPassword
        /// An OpenSSL call failed.
        case openssl
        /// Anything else.
        case unknown(String)

        /// A short machine-readable name.
        public var description: String {
            switch self {
            case .io: "io"
            case .invalidInput: "invalid-input"
            case .wrongPassword: "wrong-password"
            case .expired: "expired"
            case .notYetValid: "not-yet-valid"
            case .missingPassword: "missing-password"
            case .openssl: "openssl"
            case .unknown(let name): name
            }
        }
    }

    /// The failure class.
    public let code: Code
    /// One line saying what is wrong; never contains a password or key material.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension CredentialError {
    /// A secret file the loader refused: `.io` when it is missing or cannot be read, `.invalidInput` when it is
    /// not a file a secret may be kept in (its type, its mode, its size, not text). The loader's message is kept.
    public init(_ error: SecretFileError) {
        switch error.kind {
        case .missing, .unreadable: self.init(.io, error.message)
        case .notRegularFile, .exposed, .tooLarge, .notText: self.init(.invalidInput, error.message)
        }
    }
}
