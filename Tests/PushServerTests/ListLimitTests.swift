import PushCore
import Foundation
import Testing

/// The `limit` of every list route over a real socket: the documented bound of each, and one message naming it.
@Suite(.timeLimit(.minutes(2))) struct ListLimitTests {
    @Test func everyListRouteRefusesALimitOutsideItsBoundWithTheSameMessage() async throws {
        let s = try await TestServer.start()
        for (path, maximum) in [
            ("/v1/apps/example/notifications", 500), ("/v1/apps/example/users/u1/devices", 1000),
            ("/v1/apps/example/deliveries", 1000),
        ] {
            for limit in ["1", "\(maximum)"] {
                let ok = try await s.request("GET", "\(path)?limit=\(limit)", key: TestServer.sendKey)
                #expect(ok.status == 200, "\(path)?limit=\(limit)")
            }
            for limit in ["0", "\(maximum + 1)", "ten", "-1"] {
                let reply = try await s.request("GET", "\(path)?limit=\(limit)", key: TestServer.sendKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_limit", "\(path)?limit=\(limit)")
                #expect(reply.json?["error"]?["message"]?.stringValue == "limit must be a whole number from 1 to \(maximum), not '\(limit)'",
                        "\(path)?limit=\(limit)")
            }
        }
        try await s.stop()
    }
}
