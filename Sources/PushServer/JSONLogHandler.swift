#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import PushCore

/// A swift-log handler that writes one JSON object per line to standard error (`--log-format json`):
/// `timestamp` (RFC 3339 UTC with milliseconds), `level`, `label`, `message`, then every metadata entry as a
/// field of its own (`app`, `job`, `notificationId`, `token` — masked by whoever logs it —, …). Values are strings,
/// arrays or objects as the metadata holds them. A metadata key that would shadow one of the four fields gets a
/// `metadata.` prefix. Callers never log secrets or bodies; this handler adds nothing but the time.
public struct JSONLogHandler: LogHandler {
    /// The fields every line starts with.
    static let reservedKeys: Set<String> = ["timestamp", "level", "label", "message"]

    /// The logger's label.
    public let label: String
    /// The lowest level written.
    public var logLevel: Logger.Level
    /// Metadata attached to the logger.
    public var metadata: Logger.Metadata = [:]
    /// Metadata added to every line (e.g. task-local context).
    public var metadataProvider: Logger.MetadataProvider?
    private let write: @Sendable (String) -> Void

    /// A handler for `label` at `level` writing to standard error, one `write(2)` per line so lines of several
    /// threads never interleave.
    public init(label: String, level: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, level: level, metadataProvider: metadataProvider, write: writeStandardError)
    }

    /// A handler that hands each line (with its trailing newline) to `write`.
    public init(
        label: String, level: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// Metadata of this logger by key.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var fields: [(String, JSONValue)] = [
            ("timestamp", .string(Self.timestamp(Date()))), ("level", .string(event.level.rawValue)),
            ("label", .string(label)), ("message", .string(event.message.description)),
        ]
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            fields.append((Self.reservedKeys.contains(key) ? "metadata." + key : key, Self.json(value)))
        }
        write(JSONValue.object(fields).encodedString + "\n")
    }

    /// A metadata value as JSON.
    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .stringConvertible(let c): .string(c.description)
        case .array(let items): .array(items.map(json))
        case .dictionary(let d): .object(d.sorted(by: { $0.key < $1.key }).map { ($0.key, json($0.value)) })
        }
    }

    /// `2026-11-24T10:56:55.123Z`.
    static func timestamp(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ms % 1000), 3))Z"
    }
}

/// Writes `line` to file descriptor 2 in as few `write(2)` calls as it takes (one for any log line).
@Sendable private func writeStandardError(_ line: String) {
    var bytes = Array(line.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let n = write(2, base + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}
