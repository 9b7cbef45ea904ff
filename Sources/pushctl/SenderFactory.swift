import PushCore
import PushSender

/// Builds a sender for an app, mapping failures to exit codes: unreadable credentials are a configuration
/// error (2), an expired certificate means nothing can be delivered (3).
enum SenderFactory {
    static func make(config: PushConfiguration, settings: AppSettings, breakers: [String: PruningBreaker.State]) throws -> Sender {
        do {
            return try Sender.forApp(settings, in: config, breakerStates: breakers)
        } catch let error as CredentialError {
            throw CLIError(code: error.code == .expired || error.code == .notYetValid ? 3 : 2, message: "credentials: \(error.message)")
        } catch let error as SenderError {
            throw CLIError(code: 3, message: error.message)
        }
    }
}
