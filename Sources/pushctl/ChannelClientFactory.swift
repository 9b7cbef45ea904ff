import PushCore
import PushLanes
import PushSender

/// Builds an app's channel-management client and maps its failures to exit codes: unreadable credentials 2, an
/// expired certificate 3; APNs refusing a request 1, credentials refused 3, APNs unreachable 5.
enum ChannelClientFactory {
    /// Reads the credentials on ``BlockingLane/shared`` (file reads and key derivation block).
    static func make(config: PushConfiguration, settings: AppSettings) async throws -> ChannelClient {
        do {
            return try await BlockingLane.shared.run { try ChannelClient.forApp(settings, in: config) }
        } catch let error as CredentialError {
            throw CLIError(code: error.code == .expired || error.code == .notYetValid ? 3 : 2, message: "credentials: \(error.message)")
        }
    }

    /// The exit code and one-line message for a failed channel request.
    static func cliError(_ error: ChannelError) -> CLIError {
        switch error.code {
        case .credentials: return CLIError(code: 3, message: error.message)
        case .unreachable: return CLIError(code: 5, message: error.message)
        default: return CLIError(code: 1, message: error.message)
        }
    }
}
