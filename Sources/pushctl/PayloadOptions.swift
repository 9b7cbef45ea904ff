import ArgumentParser
import Foundation
import PushCore

/// The payload flags shared by `payload`, `send` and `broadcast`.
struct PayloadOptions: ParsableArguments {
    @Option(help: "Alert text (the body when --title is given).") var alert: String?
    @Option(help: "Alert title.") var title: String?
    @Option(help: "Alert subtitle.") var subtitle: String?
    /// Named after the field they localize, as the API's per-locale `alert`/`title`/`subtitle` objects are: the
    /// plain flag is the object's `default`, each `--…-for LOCALE=TEXT` one of its locales.
    @Option(name: .customLong("alert-for"), help: ArgumentHelp(
        "The alert for devices of LOCALE (canonical BCP 47: de, de-AT, pt-BR), repeatable: a device gets its locale's text, else its language's, else --alert (the API's per-locale alert object, whose default is --alert).",
        valueName: "LOCALE=TEXT"))
    var alertFor: [String] = []
    @Option(name: .customLong("title-for"), help: ArgumentHelp("The title for devices of LOCALE, repeatable; the default is --title.", valueName: "LOCALE=TEXT"))
    var titleFor: [String] = []
    @Option(name: .customLong("subtitle-for"), help: ArgumentHelp("The subtitle for devices of LOCALE, repeatable; the default is --subtitle.", valueName: "LOCALE=TEXT"))
    var subtitleFor: [String] = []
    /// `.unconditional`: `--badge -1` reaches the check below (a non-negative integer, as APNs takes it) instead of
    /// reading as a missing value followed by an option `-1`.
    @Option(parsing: .unconditional, help: "Badge number, a non-negative integer (0 clears it).") var badge: Int?
    @Option(help: "Sound name, e.g. default.") var sound: String?
    @Option(help: "Notification category.") var category: String?
    @Option(name: .customLong("thread-id"), help: "Thread id for grouping.") var threadId: String?
    @Flag(name: .customLong("mutable-content"), help: "Let a notification service extension modify the content.")
    var mutableContent = false
    @Option(help: "A JSON object whose keys are added beside aps.") var data: String?
    @Flag(help: "A silent (background) push: aps holds only content-available: 1.") var silent = false
    @Option(help: "Send this JSON payload as is (FILE or - for stdin) instead of building one.") var payload: String?
    @Option(name: .customLong("push-type"), help: "apns-push-type (derived from the payload by default).")
    var pushType: String?
    @Option(help: "apns-priority: 10, 5 or 1 (default 10, or 5 for silent pushes).") var priority: Int?
    @Option(help: "apns-expiration in epoch seconds (0 = deliver once).") var expiration: Int64?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id (at most 64 bytes).") var collapseId: String?
    @Option(help: "Payload byte limit below Apple's 4096 (VoIP 5120).") var limit: Int?
    @Flag(name: .customLong("no-truncate"), help: "Fail instead of shortening an oversized alert.") var noTruncate = false

    /// The request options these flags give.
    func options(appLimit: Int? = nil) throws -> NotificationOptions {
        var options = NotificationOptions()
        if let pushType {
            guard let type = PushType(rawValue: pushType) else {
                throw CLIError.usage("unknown --push-type '\(pushType)'; one of: \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            options.pushType = type
        }
        if let priority {
            guard let value = PushPriority(rawValue: priority) else {
                throw CLIError.usage("--priority must be 10, 5 or 1, not \(priority)")
            }
            options.priority = value
        }
        options.expiration = expiration
        options.collapseId = collapseId
        options.limit = [limit, appLimit].compactMap { $0 }.min()
        options.allowTruncation = !noTruncate
        return options
    }

    /// True when any text is given per locale (`--alert-for`, `--title-for`, `--subtitle-for`).
    var isLocalized: Bool { !alertFor.isEmpty || !titleFor.isEmpty || !subtitleFor.isEmpty }

    /// The per-locale texts the `--…-for` flags give, checked by the API's rule (``LocalizedText``). Exit 2 naming
    /// the flag when one is not LOCALE=TEXT, names a locale not in canonical form or twice, or lacks its default.
    func localizedText() throws -> LocalizedText {
        var texts = LocalizedText()
        for (field, base, given) in [("alert", alert, alertFor), ("title", title, titleFor), ("subtitle", subtitle, subtitleFor)] where !given.isEmpty {
            var entries: [(key: String, text: String)] = []
            for item in given {
                guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                    throw CLIError.usage("--\(field)-for takes LOCALE=TEXT (e.g. de=Hallo), not '\(item.prefix(64))'")
                }
                let key = String(item[..<equals])
                if key == "default" { throw CLIError.usage("--\(field)-for: the default text is --\(field)'s") }
                entries.append((key, String(item[item.index(after: equals)...])))
            }
            guard let base else { throw CLIError.usage("--\(field)-for needs --\(field): the text for devices of other locales") }
            do throws(FieldError) { try texts.set(field, [("default", base)] + entries) } catch {
                let prefix = "\(field): "
                throw CLIError.usage("--\(field)-for: " + (error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message))
            }
        }
        return texts
    }

    /// ``prepare(appLimit:)`` and, with per-locale text, each locale's payload (built and size-checked like the
    /// default, by the rule the API's per-locale objects use: ``LocalizedText``). Any problem is exit 2.
    func prepareLocalized(appLimit: Int? = nil) throws -> (PreparedNotification, variants: [String: [UInt8]]) {
        let texts = try localizedText()
        guard !texts.isEmpty else { return (try prepare(appLimit: appLimit), [:]) }
        if payload != nil { throw CLIError.usage("--payload sends a payload as is; it cannot be combined with builder flags") }
        return try texts.prepare(
            { (locale) throws(CLIError) -> PreparedNotification in
                var copy = self
                copy.alert = texts.text("alert", for: locale) ?? alert
                copy.title = texts.text("title", for: locale) ?? title
                copy.subtitle = texts.text("subtitle", for: locale) ?? subtitle
                copy.alertFor = []
                copy.titleFor = []
                copy.subtitleFor = []
                do { return try copy.prepare(appLimit: appLimit) } catch let error as CLIError { throw error } catch {
                    throw CLIError.usage("\(error)")
                }
            },
            named: { locale, error in CLIError(code: error.code, message: "locale \(locale): \(error.message)") })
    }

    /// Validates the flags and builds the shared part of every request. Any problem is exit 2. Per-locale text
    /// is refused here: a caller that sends it uses ``prepareLocalized(appLimit:)``.
    func prepare(appLimit: Int? = nil) throws -> PreparedNotification {
        if isLocalized { throw CLIError.usage("--alert-for, --title-for and --subtitle-for are not taken here") }
        let options = try options(appLimit: appLimit)
        do {
            if let payload {
                let builderFlags: [Any?] = [alert, title, subtitle, badge, sound, category, threadId, data]
                if builderFlags.contains(where: { $0 != nil }) || silent || mutableContent {
                    throw CLIError.usage("--payload sends a payload as is; it cannot be combined with builder flags")
                }
                return try PreparedNotification(raw: try readInput(payload), options: options)
            }
            return try build().prepare(options)
        } catch let error as PayloadError {
            throw CLIError.usage(error.message)
        }
    }

    /// A Live Activity payload for a broadcast channel: `--payload` holds `{"aps": {event, content-state, …}, custom…}`,
    /// checked by ``LiveActivityContent``'s rules (timestamp defaults to now). Only --priority (10 or 5),
    /// --expiration, --collapse-id and --limit apply.
    func prepareLiveActivity(appLimit: Int?, nowSeconds: Int64) throws -> PreparedNotification {
        guard let payload else { throw CLIError.usage("--broadcast-channel sends a Live Activity payload: give it with --payload FILE") }
        let builderFlags: [Any?] = [alert, title, subtitle, badge, sound, category, threadId, data, pushType]
        if builderFlags.contains(where: { $0 != nil }) || silent || mutableContent || noTruncate || isLocalized {
            throw CLIError.usage("--broadcast-channel takes --payload with the activity's aps keys; builder flags do not apply")
        }
        guard let json = try? JSONValue(parsing: try readInput(payload)), let pairs = json.objectPairs, let aps = json["aps"] else {
            throw CLIError.usage("--payload must be a JSON object with an \"aps\" object of Live Activity keys (event, content-state, …)")
        }
        do {
            var content = try LiveActivityContent(json: aps)
            content.custom = pairs.filter { $0.0 != "aps" }
            if content.event == .start {
                throw CLIError.usage("a broadcast channel carries update and end events; start activities with `pushctl live-activity start`")
            }
            var priorityValue: PushPriority?
            if let priority {
                guard let p = PushPriority(rawValue: priority), p != .low else { throw CLIError.usage("--priority must be 10 or 5") }
                priorityValue = p
            }
            return try content.prepare(
                nowSeconds: nowSeconds, priority: priorityValue, expiration: expiration, collapseId: collapseId,
                limit: [limit, appLimit].compactMap { $0 }.min())
        } catch let error as PayloadError {
            throw CLIError.usage(error.message)
        }
    }

    /// The typed payload the builder flags describe.
    func build() throws -> Payload {
        var aps = APS()
        if silent {
            if alert != nil || title != nil || subtitle != nil || badge != nil || sound != nil {
                throw CLIError.usage("--silent sends only content-available: 1; it cannot be combined with --alert, --title, --subtitle, --badge or --sound")
            }
            aps.contentAvailable = true
        }
        if title != nil || subtitle != nil {
            aps.alert = Alert(title: title, subtitle: subtitle, body: alert)
        } else if let alert {
            aps.alert = .text(alert)
        }
        if let badge, !(0...Int(Int32.max)).contains(badge) {
            throw CLIError.usage("--badge must be a non-negative integer (0 to 2147483647; 0 clears the badge), not \(badge)")
        }
        aps.badge = badge
        aps.sound = sound.map { .named($0) }
        aps.category = category
        aps.threadId = threadId
        aps.mutableContent = mutableContent
        var custom: [(String, JSONValue)] = []
        if let data {
            let value: JSONValue
            do { value = try JSONValue(parsing: data) } catch { throw CLIError.usage("--data: \(error)") }
            guard let pairs = value.objectPairs else { throw CLIError.usage("--data must be a JSON object") }
            custom = pairs
        }
        return Payload(aps: aps, custom: custom)
    }

    private func readInput(_ source: String) throws -> [UInt8] {
        if source == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: source) else {
            throw CLIError.usage("cannot read payload file \(source)")
        }
        return Array(data)
    }
}
