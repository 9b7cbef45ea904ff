import ArgumentParser
import PushCore

/// `pushctl payload`: print the payload and headers `send` would use, without sending.
struct PayloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payload",
        abstract: "Print the JSON payload and APNs headers that send would use.",
        discussion: """
            Examples:
              pushctl payload --alert "Houston, we have a problem." --sound default
              pushctl payload --silent --data '{"photoTitle":"Nebula"}'
            """)

    @OptionGroup var payload: PayloadOptions
    @OptionGroup var logging: LogOptions
    @Option(help: "Show apns-topic for this bundle id.") var topic: String?
    @Flag(help: "Print one JSON object with payload and headers.") var json = false

    func run() throws {
        let (prepared, variants) = try payload.prepareLocalized()
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
            ] + (variants.isEmpty ? [] : [("variants", .object(variants.sorted { $0.key < $1.key }.map {
                ($0.key, (try? JSONValue(parsing: $0.value)) ?? .null)
            }))]))
            print(out.encodedString)
            return
        }
        print(prepared.payloadString)
        for (name, value) in headers { print("\(name): \(value)") }
        for (locale, payload) in variants.sorted(by: { $0.key < $1.key }) { print("locale \(locale): \(String(decoding: payload, as: UTF8.self))") }
        if prepared.truncated {
            printError("pushctl: alert text shortened to fit \(prepared.limit) bytes (\(prepared.payload.count) bytes)")
        }
    }
}
