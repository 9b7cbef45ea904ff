import PushCore
import PushLanes
import PushSender

/// Builds a sender for an app, mapping failures to exit codes: unreadable credentials are a configuration
/// error (2), an expired certificate means nothing can be delivered (3).
enum SenderFactory {
    /// Reads and decrypts the credentials on ``BlockingLane/shared`` (file reads, PKCS#12 key derivation block).
    static func make(config: PushConfiguration, settings: AppSettings, breakers: [String: PruningBreaker.State]) async throws -> any DeliverySender {
        do {
            return try await BlockingLane.shared.run { try ServiceRouter.forApp(settings, in: config, breakerStates: breakers) }
        } catch {
            throw mapped(error)
        }
    }

    /// Starts decrypting the app's credentials on ``BlockingLane/shared``: a .p12's key derivation takes
    /// milliseconds that a one-shot send would otherwise spend after opening its registry instead of beside it.
    static func loadCredentials(_ settings: AppSettings) -> Task<any CredentialProvider, any Error> {
        Task { try await BlockingLane.shared.run { try makeCredentials(for: settings) } }
    }

    /// A sender with the credentials `loading` decrypts (see ``loadCredentials(_:)``); failures as ``make``.
    static func make(
        config: PushConfiguration, settings: AppSettings, credentials loading: Task<any CredentialProvider, any Error>,
        breakers: [String: PruningBreaker.State]
    ) async throws -> any DeliverySender {
        do {
            let credentials = try await loading.value
            return try ServiceRouter.forApp(settings, in: config, credentials: credentials, breakerStates: breakers)
        } catch {
            throw mapped(error)
        }
    }

    private static func mapped(_ error: any Error) -> any Error {
        if let error = error as? CredentialError {
            return CLIError(code: error.code == .expired || error.code == .notYetValid ? 3 : 2, message: "credentials: \(error.message)")
        }
        if let error = error as? SenderError { return CLIError(code: 3, message: error.message) }
        return error
    }
}
