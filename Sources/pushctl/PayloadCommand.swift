import ArgumentParser
import Foundation
import PushCore

/// `pushctl payload`: print the payload and headers `send` would use, without sending.
struct PayloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payload",
        abstract: "Print the JSON payload and APNs headers that send would use (and what a browser or an Android device would get).",
        discussion: """
            With --webpush, also the plaintext a browser's service worker gets (--declarative: Declarative Web Push's \
            form); with --fcm, the FCM HTTP v1 message an Android device's request carries (its token a placeholder); \
            with --unifiedpush, the JSON a UnifiedPush app receives (before encryption; unlike Web Push, a silent push \
            is sent). Each is mapped by its sender's own code; a notification a service does not carry says why.
            Examples:
              pushctl payload --alert "Houston, we have a problem." --sound default
              pushctl payload --silent --data '{"photoTitle":"Nebula"}'
              pushctl payload --alert "Breaking" --webpush --fcm
            """)

    @OptionGroup var payload: PayloadOptions
    @OptionGroup var logging: LogOptions
    @Option(help: "Show apns-topic for this bundle id.") var topic: String?
    @Flag(help: "Print one JSON object with payload and headers.") var json = false
    @Flag(help: "Also show what a Web Push device gets (the plaintext before encryption).") var webpush = false
    @Flag(help: "With --webpush: Declarative Web Push's form (apps.ID.webpush.declarative).") var declarative = false
    @Flag(help: "Also show the FCM message an Android device gets.") var fcm = false
    @Flag(help: "Also show the JSON a UnifiedPush app gets (the plaintext before encryption).") var unifiedpush = false

    func run() throws {
        if declarative, !webpush { throw CLIError.usage("--declarative needs --webpush") }
        let (prepared, variants) = try payload.prepareLocalized()
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        /// The other services' previews of `body` (APNs' form), as the senders map it.
        func services(_ body: [UInt8]) -> [(String, JSONValue)] {
            var fields: [(String, JSONValue)] = []
            if webpush { fields.append(("webPush", ServicePreview.webPush(body, prepared: prepared, declarative: declarative))) }
            if fcm { fields.append(("fcm", ServicePreview.fcm(body, prepared: prepared, nowMs: nowMs))) }
            if unifiedpush { fields.append(("unifiedPush", ServicePreview.unifiedPush(body, prepared: prepared))) }
            return fields
        }
        var headers: [(String, String)] = [
            ("apns-push-type", prepared.pushType.rawValue),
            ("apns-priority", String(prepared.priority.rawValue)),
        ]
        if let topic { headers.append(("apns-topic", prepared.topic(for: topic))) }
        if let expiration = prepared.expiration { headers.append(("apns-expiration", String(expiration))) }
        if let collapseId = prepared.collapseId { headers.append(("apns-collapse-id", collapseId)) }
        if json {
            let payloadValue = (try? JSONValue(parsing: prepared.payload)) ?? .null
            let out: JSONValue = .object([
                ("payload", payloadValue),
                ("headers", .object(headers.map { ($0.0, JSONValue.string($0.1)) })),
                ("bytes", .int(Int64(prepared.payload.count))),
                ("limit", .int(Int64(prepared.limit))),
                ("truncated", .bool(prepared.truncated)),
            ] + services(prepared.payload) + (variants.isEmpty ? [] : [("variants", .object(variants.sorted { $0.key < $1.key }.map {
                ($0.key, (try? JSONValue(parsing: $0.value)) ?? .null)
            }))]) + (variants.isEmpty || services([]).isEmpty ? [] : [("serviceVariants", .object(variants.sorted { $0.key < $1.key }.map {
                ($0.key, .object(services($0.value)))
            }))]))
            print(out.encodedString)
            return
        }
        print(prepared.payloadString)
        for (name, value) in headers { print("\(name): \(value)") }
        for (locale, payload) in variants.sorted(by: { $0.key < $1.key }) { print("locale \(locale): \(String(decoding: payload, as: UTF8.self))") }
        for line in ServicePreview.lines(services: services, payload: prepared.payload, variants: variants) { print(line) }
        if prepared.truncated {
            printError("pushctl: alert text shortened to fit \(prepared.limit) bytes (\(prepared.payload.count) bytes)")
        }
    }
}
