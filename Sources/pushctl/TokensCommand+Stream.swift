import ArgumentParser
import Foundation
import PushCore
import PushStore

extension TokensCommand {
    /// `tokens list`: every token in key order, streamed (never all rows in memory).
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List tokens in key order: one per line (token environment channels), or JSON.")
        @OptionGroup var options: TokensOptions
        @Option(name: .long, help: "Only tokens in this channel.") var channel: String?
        @Option(name: .long, help: "Only development or production tokens.") var environment: String?
        @Flag(name: .long, help: "A JSON array of {token, environment, channels, createdMs, lastRegisteredMs, lastSuccessMs}.")
        var json = false

        func run() throws {
            let (_, registry) = try options.open()
            let environment = try parseEnvironment(environment)
            let out = BufferedOutput()
            var first = true
            if json { out.write("[") }
            try streamErrors {
                try registry.forEachBatch(app: options.app, channel: channel, environment: environment, batchSize: 5000) {
                    batch in
                    for device in batch {
                        if json {
                            out.write(first ? "\n" : ",\n")
                            out.write(Self.json(device).encodedString)
                        } else {
                            out.write("\(device.token.hex) \(device.environment.rawValue) \(device.channels.joined(separator: ","))\n")
                        }
                        first = false
                    }
                }
            }
            if json { out.write(first ? "]\n" : "\n]\n") }
            out.flush()
        }

        static func json(_ device: RegisteredDevice) -> JSONValue {
            .object([
                ("token", .string(device.token.hex)), ("environment", .string(device.environment.rawValue)),
                ("channels", .array(device.channels.map { .string($0) })), ("createdMs", .int(device.createdMs)),
                ("lastRegisteredMs", .int(device.lastRegisteredMs)),
                ("lastSuccessMs", device.lastSuccessMs.map { .int($0) } ?? .null),
            ])
        }
    }

    /// `tokens export`: one canonical token per line, the format `tokens import` reads.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export", abstract: "Write every token, one per line, in key order.")
        @OptionGroup var options: TokensOptions
        @Option(name: .long, help: "Only tokens in this channel.") var channel: String?

        func run() throws {
            let (_, registry) = try options.open()
            let out = BufferedOutput()
            try streamErrors {
                try registry.export(app: options.app, channel: channel) { hex in
                    out.write(hex)
                    out.write("\n")
                }
            }
            out.flush()
        }
    }
}

/// Maps a store error thrown while streaming to the CLI's exit codes.
func streamErrors(_ body: () throws -> Void) throws {
    do { try body() } catch let error as StoreError {
        throw error.code == .invalidInput ? CLIError.usage(error.message) : CLIError(code: 1, message: error.message)
    }
}

/// Standard output with a 64 KiB buffer, so streaming a million lines is not a million write calls.
final class BufferedOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    /// Appends text, writing out the buffer when it is full.
    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Writes out everything buffered.
    func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
