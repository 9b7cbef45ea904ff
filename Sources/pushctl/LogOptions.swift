import ArgumentParser
import Foundation
import Logging
import PushServer
import Synchronization

/// `--log-format text|json`, which every command takes. The value is recorded while the arguments are
/// validated, and ``bootstrap()`` sets up logging once for whichever command runs.
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log lines on stderr: text (default) or json, one object per line (else $PUSHCTL_LOG_FORMAT).")
    var logFormat: LogFormat?

    /// The flag of the command being run (several groups may be parsed; any one that has it wins).
    private static let chosen = Mutex<LogFormat?>(nil)

    mutating func validate() throws {
        if let logFormat { Self.chosen.withLock { $0 = logFormat } }
    }

    /// Bootstraps swift-log for the process: the flag, else `$PUSHCTL_LOG_FORMAT`, else text; the level from
    /// `$LOG_LEVEL` (default info). Logs go to stderr. An unknown `$PUSHCTL_LOG_FORMAT` is a usage error.
    static func bootstrap() throws {
        let environment = ProcessInfo.processInfo.environment
        let format: LogFormat
        do { format = try LogFormat.choose(flag: chosen.withLock { $0 }, environment: environment) } catch {
            throw CLIError.usage(error.message)
        }
        LoggingSystem.bootstrap(format.makeHandler(level: LogFormat.level(environment: environment)))
    }
}

extension LogFormat: ExpressibleByArgument {}
