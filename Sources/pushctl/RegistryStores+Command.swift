import PushCore
import PushStore

extension RegistryStores {
    /// Opens the registry for a pushctl command; a failure is a usage error (exit 2) naming the database. The
    /// default options are a one-shot command's (``RegistryOptions/command``: small WALs kept on close); `serve`
    /// and `worker` pass their own.
    static func openForCommand(
        _ config: PushConfiguration, options: RegistryOptions = .command
    ) throws(CLIError) -> any RegistryStore {
        do { return try open(config, options: options) } catch {
            throw CLIError.usage("cannot open the registry \(config.database): \(error.message)")
        }
    }
}
