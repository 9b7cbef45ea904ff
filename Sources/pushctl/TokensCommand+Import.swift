import ArgumentParser
import Foundation
import PushCore
import PushStore

extension TokensCommand {
    /// `tokens import FILE|-`.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import tokens, one per line, in batched transactions.",
            discussion: """
                Each batch is validated before anything is written: a batch with an invalid line writes \
                nothing; invalid lines are reported with their numbers and the command exits 2. With --format jsonl \
                each line is a registration object as POST /v1/apps/{app}/devices takes it (service, token, oldToken, \
                subscription, channels, environment and the installation fields: installation, user, timeZone, locale, \
                appVersion, osVersion, tags): without --service each line's own service decides (apns when left out), \
                so a file of mixed registrations imports as the API takes them. \
                With --service webpush each line is a browser's subscription and its fields, {"subscription": \
                {"endpoint", "expirationTime", "keys"}, …installation fields…}, judged as the API judges it (the app \
                needs apps.ID.webpush). With --service fcm each line is an Android app's FCM registration token, \
                verbatim (32-4096 characters of A-Z a-z 0-9 - _ :), or with --format jsonl a registration object \
                {"token", …installation fields…}; the app needs no FCM configuration to keep them. With --service hms each \
                line is an HMS Core app's push token (32-1024 characters of A-Z a-z 0-9 - _ . : + / =), the same way, and \
                with --service harmonyos a HarmonyOS app's push token (the same form). \
                With --service unifiedpush each line is {"subscription": {"endpoint", "keys"}, …installation fields…} \
                (the app needs apps.ID.unifiedpush); an import does not run UnifiedPush discovery, so unifiedpush \
                lines need --skip-discovery: endpoints from your own records, judged by form and address.
                """)
        @OptionGroup var options: TokensOptions
        @Argument(help: "A file with one token per line, or - for standard input.") var file: String
        @Option(name: .long, help: "development or production (default: from the app's endpoint).")
        var environment: String?
        @Option(name: .long, help: "A channel for every imported token (repeatable).") var channel: [String] = []
        @Option(name: .long, help: "Tokens per transaction.") var batchSize = 50_000
        @Option(name: .long, help: "lines (one token per line) or jsonl (one registration object per line); default lines, jsonl with --service webpush.")
        var format: String?
        @Option(name: .long, help: "apns (tokens), webpush (browser subscriptions as JSON lines) fcm (FCM registration tokens), hms (HMS push tokens), harmonyos (HarmonyOS push tokens) or unifiedpush (endpoints as JSON lines); every line's service. Default apns, or with --format jsonl each line's own.")
        var service: String?
        @Flag(name: .customLong("skip-discovery"), help: "Take unifiedpush lines without UnifiedPush discovery (which an import never runs): endpoints from your own records.")
        var skipDiscovery = false

        func run() throws {
            let (settings, registry) = try options.open()
            let environment = try parseEnvironment(environment) ?? settings.defaultEnvironment
            guard batchSize > 0 else { throw CLIError.usage("--batch-size must be positive") }
            let handle: FileHandle
            if file == "-" {
                handle = .standardInput
            } else {
                guard let opened = FileHandle(forReadingAtPath: absolutePath(file)) else {
                    throw CLIError.usage("cannot read \(file)")
                }
                handle = opened
            }
            let given = try service.map { (name) throws(CLIError) -> PushService in
                guard let service = PushService(rawValue: name) else {
                    throw CLIError.usage("--service must be apns, webpush, fcm, hms, harmonyos or unifiedpush")
                }
                return service
            }
            let pushService = given ?? .apns
            let webPush = settings.webPush?.hostPolicy
            if pushService == .webpush {
                guard webPush != nil else { throw CLIError.usage("app \(options.app) has no Web Push configured (apps.\(options.app).webpush)") }
                guard self.format ?? "jsonl" == "jsonl" else { throw CLIError.usage("--service webpush reads JSON lines (--format jsonl)") }
            }
            if pushService == .unifiedpush {
                guard settings.unifiedPush != nil else {
                    throw CLIError.usage("app \(options.app) has no UnifiedPush configured (apps.\(options.app).unifiedpush)")
                }
                guard self.format ?? "jsonl" == "jsonl" else { throw CLIError.usage("--service unifiedpush reads JSON lines (--format jsonl)") }
                guard skipDiscovery else {
                    throw CLIError.usage(
                        "--service unifiedpush needs --skip-discovery: an import does not run UnifiedPush discovery (one request per line); give it for endpoints from your own records")
                }
            }
            let format = self.format ?? (pushService == .webpush || pushService == .unifiedpush ? "jsonl" : "lines")
            guard format == "lines" || format == "jsonl" else { throw CLIError.usage("--format must be lines or jsonl") }
            if format == "jsonl" && (!channel.isEmpty || self.environment != nil) {
                throw CLIError.usage("--format jsonl takes channels and environment from each line")
            }
            let jsonl = format == "jsonl"
            let report = try cli { () throws(StoreError) -> ImportReport in
                if jsonl {
                    return try registry.importRegistrations(
                        app: options.app, lines: LineReader(handle), defaultEnvironment: environment, batchSize: min(batchSize, 10_000),
                        webPush: webPush, unifiedPush: settings.unifiedPush?.hostPolicy, discoverySkipped: skipDiscovery,
                        service: given)
                }
                if pushService == .fcm || pushService == .hms || pushService == .harmonyos {
                    return try registry.importRegistrationTokens(
                        app: options.app, service: pushService, lines: LineReader(handle), environment: environment,
                        channels: channel.isEmpty ? nil : channel, batchSize: min(batchSize, 10_000))
                }
                return try registry.importTokens(
                    app: options.app, lines: LineReader(handle), environment: environment,
                    channels: channel.isEmpty ? nil : channel, batchSize: batchSize)
            }
            print("imported \(report.imported) tokens in \(report.committedBatches) batches")
            guard report.invalidCount == 0 else {
                for bad in report.invalid { printError("line \(bad.line): \(bad.message)") }
                throw CLIError.usage(
                    "\(report.invalidCount) invalid lines; \(report.failedBatches) batches "
                        + "(\(report.skippedValidLines) valid tokens) not written")
            }
        }
    }

    /// Hidden: `tokens bench-register --count N [--with-fields]` times N single registrations in-process.
    struct BenchRegister: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench-register", abstract: "Benchmark single registrations.", shouldDisplay: false)
        @OptionGroup var options: TokensOptions
        @Option(name: .long, help: "Registrations to time.") var count = 10_000
        @Option(name: .long, help: "Registrations per registerBatch call (1: register one at a time).") var batch = 1
        @Flag(name: .customLong("with-fields"), help: "Give every installation field (installation, user, timeZone, locale, versions, tags).")
        var withFields = false

        func run() throws {
            let (settings, registry) = try options.open()
            var generator = SystemRandomNumberGenerator()
            var latencies: [Double] = []  // per call
            latencies.reserveCapacity(count)
            let start = DispatchTime.now().uptimeNanoseconds
            var done = 0
            while done < count {
                let n = min(max(1, batch), count - done)
                let requests = try (0..<n).map { _ in
                    let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    var request = RegistrationRequest(
                        app: options.app, token: try DeviceToken(bytes: bytes), environment: settings.defaultEnvironment)
                    if withFields { request.installation = try Self.fields(done) }
                    return request
                }
                let t0 = DispatchTime.now().uptimeNanoseconds
                if n == 1 && batch <= 1 && !withFields {
                    _ = try cli { () throws(StoreError) in
                        try registry.register(
                            app: options.app, token: requests[0].token, oldToken: nil, channels: nil,
                            environment: settings.defaultEnvironment)
                    }
                } else {
                    for result in registry.registerBatch(requests) {
                        if case .failure(let error) = result { throw CLIError(code: 1, message: error.message) }
                    }
                }
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                done += n
            }
            let total = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            latencies.sort()
            func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
            print(String(
                format: "registrations=%d seconds=%.2f rate=%.0f/s p50_ms=%.3f p99_ms=%.3f max_ms=%.3f",
                count, total, Double(count) / total, percentile(0.50), percentile(0.99), latencies.last ?? 0))
        }

        /// Every installation field, as an app sends them at launch.
        static func fields(_ n: Int) throws -> InstallationUpdate {
            var update = InstallationUpdate()
            let names = SystemTimeZones.names
            let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"]
            try update.set("installation", text: "inst-\(n)-\(UInt32.random(in: 0...UInt32.max))", zones: names)
            try update.set("user", text: "user-\(n / 2)", zones: names)
            try update.set("timeZone", text: zones[n % zones.count], zones: names)
            try update.set("locale", text: ["de-DE", "en-US", "fr-FR"][n % 3], zones: names)
            try update.set("appVersion", text: "2.\(n % 12).1", zones: names)
            try update.set("osVersion", text: "17.\(n % 5)", zones: names)
            try update.set("tags", json: .object([("plan", .string(n % 2 == 0 ? "pro" : "free")), ("score", .int(Int64(n % 100))), ("beta", .bool(n % 7 == 0))]), zones: names)
            return update
        }
    }
}

extension TokensCommand {
    /// Hidden: `tokens bench-stream` times the broadcast path (``SQLiteRegistry/batches``: decoded devices).
    struct BenchStream: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench-stream", abstract: "Benchmark streaming decoded devices.", shouldDisplay: false)
        @OptionGroup var options: TokensOptions
        @Option(name: .long, help: "Devices per keyset batch.") var batchSize = 1000

        func run() throws {
            let (_, registry) = try options.open()
            let start = DispatchTime.now().uptimeNanoseconds
            var rows = 0
            try streamErrors {
                try registry.forEachBatch(app: options.app, batchSize: batchSize) { rows += $0.count }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            print(String(format: "rows=%d seconds=%.2f rate=%.0f", rows, seconds, Double(rows) / seconds))
        }
    }
}

/// Lines of a file read in 1 MiB chunks, so importing millions of lines never holds the whole file.
struct LineReader: Sequence, IteratorProtocol {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[position..<newline], as: UTF8.self)
                position = newline + 1
                return line
            }
            if atEnd {
                guard position < buffer.count else { return nil }
                let line = String(decoding: buffer[position...], as: UTF8.self)
                position = buffer.count
                return line
            }
            buffer.removeFirst(position)
            position = 0
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
