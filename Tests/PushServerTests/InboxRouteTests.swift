import Foundation
import PushCore
import Testing

/// The development inbox's routes on a server that runs no built-in simulator: 404 `inbox_unavailable` with a JSON
/// body saying why, for reading and clearing alike, and the usual 401 without a send key. (With the simulator:
/// ServeCommandTests and Tests/console/inbox_test.py.)
@Suite(.timeLimit(.minutes(2))) struct InboxRouteTests {
    @Test func aServerWithoutTheBuiltInSimulatorAnswers404InboxUnavailable() async throws {
        let s = try await TestServer.start()
        defer { Task { try? await s.stop() } }
        for method in ["GET", "DELETE"] {
            let reply = try await s.request(method, "/v1/apps/example/inbox", key: TestServer.sendKey)
            #expect(reply.status == 404, "\(method) \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.json?["error"]?["code"] == .string("inbox_unavailable"))
            #expect(reply.json?["error"]?["message"]?.stringValue?.contains("built-in simulator") == true)
        }
        // Its parameters are judged first, as the description says: a device name longer than any is 400.
        let long = try await s.request("GET", "/v1/apps/example/inbox?device=\(String(repeating: "0", count: 4097))", key: TestServer.sendKey)
        #expect(long.status == 400 && long.json?["error"]?["code"] == .string("invalid_device"), "\(String(decoding: long.body, as: UTF8.self))")
        let anonymous = try await s.request("GET", "/v1/apps/example/inbox", key: "wrong")
        #expect(anonymous.status == 401)
    }
}
