import Foundation
import Logging
import PushCore

/// How `pushctl` writes its logs (to standard error): `--log-format`, else `$PUSHCTL_LOG_FORMAT`, else text.
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's plain lines (the default).
    case text
    /// One JSON object per line (``JSONLogHandler``).
    case json

    /// The format a flag (wins) or the environment chose; an unknown environment value is an error naming it.
    public static func choose(flag: LogFormat?, environment: [String: String]) throws(ConfigurationError) -> LogFormat {
        if let flag { return flag }
        guard let text = environment["PUSHCTL_LOG_FORMAT"], !text.isEmpty else { return .text }
        guard let format = LogFormat(rawValue: text) else {
            throw ConfigurationError("PUSHCTL_LOG_FORMAT must be text or json, not '\(text)'")
        }
        return format
    }

    /// The level `$LOG_LEVEL` names (trace, debug, info, notice, warning, error, critical), else info.
    public static func level(environment: [String: String]) -> Logger.Level {
        environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
    }

    /// A handler factory for `LoggingSystem.bootstrap`: every logger writes to standard error at `level`.
    public func makeHandler(level: Logger.Level) -> @Sendable (String) -> any LogHandler {
        switch self {
        case .text:
            return { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        case .json:
            return { label in JSONLogHandler(label: label, level: level) }
        }
    }
}
