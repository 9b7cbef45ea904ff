import Foundation
import PushCore

/// Posts signed JSON to an app's webhook (`apps.ID.webhook`). Each request carries
/// `X-PushProvider-Timestamp: <epoch seconds>` and
/// `X-PushProvider-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, so the receiver can check
/// who sent it and refuse replays of old requests. Blocking: call it from a thread of its own.
public final class WebhookClient: WebhookPoster, Sendable {
    /// The URL posted to.
    public let url: String
    private let secret: [UInt8]
    private let timeoutMs: Int
    private let caFile: String?

    /// A client with the secret given.
    public init(url: String, secret: [UInt8], timeoutMs: Int = 10_000, caFile: String? = nil) {
        self.url = url
        self.secret = secret
        self.timeoutMs = timeoutMs
        self.caFile = caFile
    }

    /// A client for `settings`, reading the secret from its file (its first line, ``SecretFileLoader``) or
    /// environment variable.
    public convenience init(
        _ settings: WebhookSettings, environment: [String: String] = ProcessInfo.processInfo.environment,
        timeoutMs: Int = 10_000
    ) throws(CredentialError) {
        let secret: String
        switch settings.secret {
        case .file(let path):
            secret = try CredentialFiles.firstLine(path, name: "webhook secret file")
        case .environment(let name):
            guard let value = environment[name] else {
                throw CredentialError(.missingPassword, "environment variable \(name) (the webhook secret) is not set")
            }
            secret = value
        }
        guard !secret.isEmpty else { throw CredentialError(.invalidInput, "the webhook secret is empty") }
        self.init(url: settings.url, secret: Array(secret.utf8), timeoutMs: timeoutMs, caFile: settings.caFile)
    }

    /// The signature header's value for `body` sent at `timestamp` (epoch seconds).
    public static func signature(secret: [UInt8], timestamp: Int64, body: [UInt8]) -> String {
        let mac = hmacSHA256(key: secret, data: Array("\(timestamp).".utf8) + body)
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// POSTs `body` (JSON) signed at `timestamp`; returns the HTTP status, or throws when there was no answer.
    public func post(_ body: [UInt8], timestamp: Int64, delivery: String) throws -> Int {
        try postSigned(body, timestamp: timestamp, delivery: delivery)
    }

    /// ``post(_:timestamp:delivery:)`` with its transport error typed.
    public func postSigned(_ body: [UInt8], timestamp: Int64, delivery: String) throws(TransportError) -> Int {
        let headers = [
            "Content-Type: application/json",
            "User-Agent: PushProvider-webhook",
            "X-PushProvider-Delivery: \(delivery)",
            "X-PushProvider-Timestamp: \(timestamp)",
            "X-PushProvider-Signature: \(Self.signature(secret: secret, timestamp: timestamp, body: body))",
            "Expect:",
        ]
        return try BlockingPost(url: url, headers: headers, body: body, timeoutMs: timeoutMs, caFile: caFile).perform()
    }
}
