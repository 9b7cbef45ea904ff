import ArgumentParser
import Foundation
import Logging
import PushCore
import PushSender
import PushStore

/// `pushctl send`: one notification to each selected device, with Apple's retry and pruning rules.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification to devices now.",
        discussion: """
            Targets: --token (repeatable), --tokens-file (one token per line), --channel, or --all registered \
            devices of the app. Prints one line per token (masked token, status, reason, apns-id), or JSON lines \
            with --json. Exit 0 all accepted; 1 some not accepted or the pruning breaker tripped; 2 invalid \
            input or configuration (nothing sent); 3 nothing could be delivered (connection or credentials).
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "App id from the configuration.") var app: String
    @Option(name: .customLong("token"), help: "Device token (hex or <…> form); repeatable.") var tokens: [String] = []
    @Option(name: .customLong("tokens-file"), help: "File with one token per line (- for stdin).") var tokensFile: String?
    @Option(help: "Every registered device in this channel.") var channel: String?
    @Flag(help: "Every registered device of the app.") var all = false
    @OptionGroup var payload: PayloadOptions
    @Flag(help: "JSON lines instead of text.") var json = false

    func run() async throws {
        let config = try global.loadConfiguration()
        let appSettings: AppSettings
        do { appSettings = try config.app(app) } catch { throw CLIError.usage(error.message) }
        let selectors = [!tokens.isEmpty, tokensFile != nil, channel != nil, all].filter { $0 }.count
        guard selectors == 1 else {
            throw CLIError.usage("choose exactly one target: --token, --tokens-file, --channel or --all")
        }
        let prepared = try payload.prepare(appLimit: appSettings.payloadLimit)
        let explicit = try explicitTokens()

        let credentials: any CredentialProvider
        do { credentials = try makeCredentials(for: appSettings) } catch {
            let code: Int32 = error.code == .expired || error.code == .notYetValid ? 3 : 2
            throw CLIError(code: code, message: error.message)
        }
        let registry: Registry
        do { registry = try Registry(path: config.database) } catch {
            throw CLIError.usage("cannot open the registry \(config.database): \(error)")
        }
        // Belt and braces: the sender refuses an expired certificate before connecting, naming the date.
        let notAfterMs = (credentials as? CertificateCredentials).map { $0.facts.notAfter * 1000 }
        let sender: Sender
        do {
            sender = try Sender(
                app: appSettings, simulator: config.simulator, credentials: credentials,
                sink: RegistrySink(registry: registry, app: app), certificateNotAfterMs: notAfterMs,
                logger: Logger(label: "pushctl.send"))
        } catch { throw CLIError(code: 3, message: error.message) }

        let output = ResultPrinter(json: json)
        let bundleId = appSettings.topic
        let onResult: @Sendable (DeliveryResult) -> Void = { output.print($0) }
        if let explicit {
            let items = explicit.lazy.map { SendItem(prepared.request(token: $0, bundleId: bundleId)) }
            await sender.run(items, onResult: onResult)
        } else {
            let stream = registry.batches(app: app, channel: channel)
            let items = stream.lazy.flatMap { $0 }.map {
                SendItem(prepared.request(token: $0.token, bundleId: bundleId), environment: $0.environment)
            }
            await sender.run(items, onResult: onResult)
            if let error = stream.error { printError("pushctl: registry: \(error)") }
        }
        await sender.shutdown()
        output.flush()
        let summary = sender.summary
        for endpoint in summary.breakerTripped {
            printError("pushctl: pruning breaker tripped for \(endpoint): too many BadDeviceToken answers (sandbox/production mix-up?); those tokens were kept")
        }
        for stopped in summary.stoppedEndpoints { printError("pushctl: \(stopped)") }
        if summary.finished == 0 { throw CLIError(code: 1, message: "no devices matched") }
        if summary.allAccepted { return }
        if summary.accepted == 0 && summary.finished == summary.notSent + summary.failed
            && (summary.notSent > 0 || !summary.stoppedEndpoints.isEmpty) {
            throw CLIError(code: 3, message: "nothing could be delivered")
        }
        throw CLIError(
            code: 1,
            message: "\(summary.accepted) of \(summary.finished) accepted (\(summary.tokenDead) dead tokens, \(summary.rejected) rejected, \(summary.failed) failed)")
    }

    /// Tokens from --token / --tokens-file, validated before anything is sent; nil for registry targets.
    private func explicitTokens() throws -> [DeviceToken]? {
        var texts = tokens
        if let tokensFile {
            let data: Data?
            if tokensFile == "-" { data = FileHandle.standardInput.readDataToEndOfFile() } else {
                data = FileManager.default.contents(atPath: tokensFile)
            }
            guard let data else { throw CLIError.usage("cannot read tokens file \(tokensFile)") }
            texts = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        } else if texts.isEmpty {
            return nil
        }
        var result: [DeviceToken] = []
        for (i, text) in texts.enumerated() {
            do { result.append(try DeviceToken(parsing: text)) } catch {
                throw CLIError.usage("token \(i + 1): \(error)")
            }
        }
        guard !result.isEmpty else { throw CLIError.usage("no tokens given") }
        return result
    }
}

/// Prints results from the transport thread, buffered, one line each.
final class ResultPrinter: @unchecked Sendable {
    private let json: Bool
    private let lock = NSLock()
    private var buffer: [UInt8] = []

    init(json: Bool) { self.json = json }

    func print(_ r: DeliveryResult) {
        var line: String
        if json {
            var pairs: [(String, JSONValue)] = [
                ("token", .string(r.token.masked)), ("status", .int(Int64(r.status))),
                ("result", .string(r.kind.rawValue)), ("apnsId", .string(r.apnsId)),
                ("attempts", .int(Int64(r.attempts))),
            ]
            if let reason = r.reason { pairs.append(("reason", .string(reason.rawValue))) }
            if let u = r.uniqueId { pairs.append(("uniqueId", .string(u))) }
            if r.pruned { pairs.append(("pruned", .bool(true))) }
            if r.possiblyDuplicated { pairs.append(("possiblyDuplicated", .bool(true))) }
            if let e = r.error { pairs.append(("error", .string(e))) }
            line = JSONValue.object(pairs).encodedString
        } else {
            line = "\(r.token.masked) \(r.status) \(r.reason?.rawValue ?? (r.isAccepted ? "accepted" : r.kind.rawValue)) \(r.apnsId)"
            if let e = r.error { line += " (\(e))" }
        }
        lock.lock()
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0a)
        let full = buffer.count > 64 * 1024
        lock.unlock()
        if full { flush() }
    }

    func flush() {
        lock.lock()
        let bytes = buffer
        buffer.removeAll(keepingCapacity: true)
        lock.unlock()
        if !bytes.isEmpty { FileHandle.standardOutput.write(Data(bytes)) }
    }
}
