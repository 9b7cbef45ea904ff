import Foundation
import PushCore
import Testing

/// `pushctl channels …` exit codes, run as the built binary against a simulator process.
@Suite(.timeLimit(.minutes(2))) struct ChannelsCommandTests {
    typealias World = BroadcastCommandTests.World

    @Test func aChannelRequestRefusedForItsCredentialsExitsThreeNamingApplesReason() async throws {
        // A simulator that takes provider tokens only, and an app with a certificate: APNs answers 403
        // MissingProviderToken, a refusal of the credentials (as for device sends), not of the request.
        var w = try await World.make(tokens: 0, simulatorArgs: ["--client-auth", "token"])
        defer { w.stop() }
        for args in [["channels", "create", "--label", "x"], ["channels", "list"]] {
            let r = try await CLI.run(args + ["--config", w.config, "--app", "example"])
            #expect(r.status == 3, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("MissingProviderToken"), "\(args): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
        }
        let local = try await CLI.run(["channels", "list", "--local", "--config", w.config, "--app", "example"])
        #expect(local.status == 0 && local.stdout.isEmpty)  // nothing was kept
        // --json says "none" in JSON: an empty array, not nothing.
        let json = try await CLI.run(["channels", "list", "--local", "--json", "--config", w.config, "--app", "example"])
        #expect(json.status == 0 && json.stdout == "[]\n", "\(json.stdout)")
    }
}
