import Foundation
import PushCore
import PushSender
import PushServer
import Synchronization
import Testing

/// `GET /healthz/details` over a real socket: certificate days computed at each request, `degraded` (503) within
/// `healthWarningDays` of expiry; `GET /healthz` gives the same verdict without the details.
@Suite(.timeLimit(.minutes(2))) struct HealthReportTests {
    /// A development PKI whose client certificate expires `days` from now, loaded as `pushctl serve` loads it.
    static func certificate(days: Int) throws -> (PushServer.CredentialStatus, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("health-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let pki = try DevCertificates.make(in: dir.path, options: .init(topic: "com.example.app", days: days))
        let app = AppSettings(
            topic: "com.example.app", endpoint: .simulator,
            auth: .certificate(p12: pki.path("client.p12"), password: .file(pki.path("client.p12.password"))))
        return (PushServer.CredentialStatus.loading(app.apns!), dir)
    }

    /// `/healthz` answers `status` with exactly `{"status": text}`: the verdict, no detail.
    static func expectSummary(of s: TestServer, _ status: Int, _ text: String) async throws {
        let summary = try await s.request("GET", "/healthz")
        #expect(summary.status == status)
        #expect(summary.json == .object([("status", .string(text))]), "\(String(decoding: summary.body, as: UTF8.self))")
    }

    @Test func daysToExpiryAreComputedAtEachRequestAndTheServerIsDegradedWithinTheWarningDays() async throws {
        let (status, dir) = try Self.certificate(days: 40)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(status.loaded)
        let notAfter = try #require(status.notAfter)
        let clock = Mutex(Date())
        let s = try await TestServer.start(
            credentials: ["example": status, "other": .init(loaded: true, kind: "token")],
            now: { clock.withLock { $0 } })

        let fresh = try await s.request("GET", "/healthz/details")
        try await Self.expectSummary(of: s, 200, "ok")
        #expect(fresh.status == 200, "\(String(decoding: fresh.body, as: UTF8.self))")
        #expect(fresh.json?["status"] == .string("ok"))
        #expect(fresh.json?["healthWarningDays"] == .int(30))
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(notAfter)).ISO8601Format()
        let days = Int((Double(notAfter) - clock.withLock { $0 }.timeIntervalSince1970) / 86_400)
        #expect(days == 39 || days == 40)
        #expect(fresh.json?["apps"]?["example"] == .object([
            ("services", .array([.string("apns")])), ("endpoint", .string("simulator")), ("credentials", .string("certificate")), ("loaded", .bool(true)),
            ("expiresAt", .string(expiresAt)), ("daysToExpiry", .int(Int64(days))), ("expired", .bool(false)),
            ("expiresSoon", .bool(false)),
        ]))
        // A .p8 key has no expiry: no days, never the cause of a degraded report.
        #expect(fresh.json?["apps"]?["other"] == .object([
            ("services", .array([.string("apns")])), ("endpoint", .string("production")), ("credentials", .string("token")), ("loaded", .bool(true)),
        ]))

        // Eleven days later, the same running server: inside the 30-day warning.
        clock.withLock { $0 = $0.addingTimeInterval(11 * 86_400) }
        let soon = try await s.request("GET", "/healthz/details")
        try await Self.expectSummary(of: s, 503, "degraded")
        #expect(soon.status == 503)
        #expect(soon.json?["status"] == .string("degraded"))
        #expect(soon.json?["apps"]?["example"]?["daysToExpiry"] == .int(Int64(days - 11)))
        #expect(soon.json?["apps"]?["example"]?["expiresSoon"] == .bool(true))
        #expect(soon.json?["apps"]?["example"]?["expired"] == .bool(false))

        // Past the expiry.
        clock.withLock { $0 = Date(timeIntervalSince1970: TimeInterval(notAfter + 60)) }
        let expired = try await s.request("GET", "/healthz/details")
        try await Self.expectSummary(of: s, 503, "degraded")
        #expect(expired.status == 503)
        #expect(expired.json?["apps"]?["example"]?["expired"] == .bool(true))
        #expect(expired.json?["apps"]?["example"]?["daysToExpiry"] == .int(-1))
        try await s.stop()
    }

    @Test func healthWarningDaysComeFromTheConfiguration() async throws {
        let (status, dir) = try Self.certificate(days: 40)
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = Mutex(Date().addingTimeInterval(11 * 86_400))
        let s = try await TestServer.start(
            credentials: ["example": status, "other": .init(loaded: true, kind: "token")],
            now: { clock.withLock { $0 } }, healthWarningDays: 7)
        let report = try await s.request("GET", "/healthz/details")
        #expect(report.status == 200, "\(String(decoding: report.body, as: UTF8.self))")
        #expect(report.json?["healthWarningDays"] == .int(7))
        #expect(report.json?["apps"]?["example"]?["expiresSoon"] == .bool(false))
        try await s.stop()
    }

    @Test func credentialsThatDoNotLoadAreReportedWithTheirCause() async throws {
        let app = AppSettings(
            topic: "com.example.app", endpoint: .simulator,
            auth: .certificate(p12: "/nonexistent/client.p12", password: .environment("HEALTH_TEST_UNSET_VARIABLE")))
        let status = PushServer.CredentialStatus.loading(app.apns!)
        #expect(!status.loaded)
        #expect(status.kind == "certificate")
        #expect(status.error?.contains("HEALTH_TEST_UNSET_VARIABLE") == true)
    }

    /// An app with UnifiedPush has a `unifiedpush` block beside its APNs fields: its VAPID public key (what its apps
    /// hand their distributor), its subject and the exempt hosts; no distributor is probed (each user picks their
    /// own). A key that does not load makes the app degraded, naming the file.
    @Test func anAppWithUnifiedPushReportsItsVAPIDKeySubjectAndExemptHosts() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("health-up-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("vapid.pem").path
        let publicKey = try VAPIDKeyFile.create(at: path)
        let exempt = ["ntfy.internal", "ntfy.internal:8080", "10.1.0.0/16"]
        // Both apps' APNs credentials loaded: what the verdict says is UnifiedPush's.
        let apns: [String: PushServer.CredentialStatus] = [
            "example": .init(loaded: true, kind: "certificate", daysLeft: 300), "other": .init(loaded: true, kind: "token"),
        ]
        let s = try await TestServer.start(
            credentials: apns, adminListener: true,
            unifiedPush: try UnifiedPushSettings(vapidKey: path, subject: "mailto:ops@example.com", exemptHosts: exempt),
            loadServiceHealth: true)
        let details = try await s.request("GET", "/healthz/details", admin: true)
        try await s.stop()
        #expect(details.status == 200, "\(String(decoding: details.body, as: UTF8.self))")
        let app = details.json?["apps"]?["example"]
        #expect(app?["services"] == .array([.string("apns"), .string("unifiedpush")]))
        #expect(app?["unifiedpush"] == .object([
            ("loaded", .bool(true)), ("publicKey", .string(publicKey)), ("subject", .string("mailto:ops@example.com")),
            ("exemptHosts", .array(exempt.map { .string($0) })),
        ]), "\(String(decoding: details.body, as: UTF8.self))")

        let missing = dir.appendingPathComponent("gone.pem").path
        let broken = try await TestServer.start(
            credentials: apns, adminListener: true, unifiedPush: try UnifiedPushSettings(vapidKey: missing, subject: "mailto:ops@example.com"),
            loadServiceHealth: true)
        let degraded = try await broken.request("GET", "/healthz/details", admin: true)
        try await broken.stop()
        #expect(degraded.status == 503 && degraded.json?["status"] == .string("degraded"))
        let block = degraded.json?["apps"]?["example"]?["unifiedpush"]
        #expect(block?["loaded"] == .bool(false) && block?["exemptHosts"] == .array([]), "\(String(describing: block))")
        #expect(block?["error"]?.stringValue?.contains("gone.pem") == true && block?["error"]?.stringValue?.contains("apps.example.unifiedpush.vapidKey") == true, "\(String(describing: block))")
    }
}
