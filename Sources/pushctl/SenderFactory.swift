import PushCore
import PushLanes
import PushSender

/// Builds a sender for an app, mapping failures to exit codes: unreadable credentials are a configuration
/// error (2), an expired certificate means nothing can be delivered (3). Either only when every service of the app
/// fails: one failing service among others defers its devices by name (exit 1) while the others deliver.
enum SenderFactory {
    /// Reads and decrypts the credentials on ``BlockingLane/shared`` (file reads, PKCS#12 key derivation block).
    static func make(config: PushConfiguration, settings: AppSettings, breakers: [String: PruningBreaker.State]) async throws -> any DeliverySender {
        do {
            return try await BlockingLane.shared.run { try ServiceRouter.forApp(settings, in: config, breakerStates: breakers) }
        } catch {
            throw mapped(error)
        }
    }

    /// Starts decrypting the app's APNs credentials (none without APNs) on ``BlockingLane/shared``: a .p12's key
    /// derivation takes milliseconds that a one-shot send would otherwise spend after opening its registry instead
    /// of beside it. A failure is kept, not thrown: the router defers that service's devices while the app's other
    /// services send (``ServiceRouter/forApp(_:in:apnsCredentials:settings:breakerStates:logger:)``).
    static func loadCredentials(_ settings: AppSettings) -> Task<Result<any CredentialProvider, any Error>?, Never> {
        Task {
            guard let apns = settings.apns else { return nil }
            do { return .success(try await BlockingLane.shared.run { try makeCredentials(for: apns) }) } catch {
                return .failure(error)
            }
        }
    }

    /// A sender with the credentials `loading` decrypts (see ``loadCredentials(_:)``); failures as ``make``.
    static func make(
        config: PushConfiguration, settings: AppSettings, credentials loading: Task<Result<any CredentialProvider, any Error>?, Never>,
        breakers: [String: PruningBreaker.State]
    ) async throws -> any DeliverySender {
        do {
            let credentials = await loading.value
            return try ServiceRouter.forApp(settings, in: config, apnsCredentials: credentials, breakerStates: breakers)
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
