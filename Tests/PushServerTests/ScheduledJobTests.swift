import Foundation
import PushCore
import PushDelivery
import PushServer
import PushStore
import Synchronization
import Testing
import func TestSupport.waitUntil

/// Send jobs with `"at"` and `DELETE` over a real socket, against the real simulator, with the store's clock
/// under the test's control: nothing goes out before the time, it goes out once the clock reaches it, and a
/// cancelled job never does.
@Suite(.timeLimit(.minutes(1))) struct ScheduledJobTests {
    /// A clock the test moves by hand (ms since 1970), counting how often it is read.
    final class ManualClock: Sendable {
        let ms: Atomic<Int64>
        let readCount = Atomic<Int>(0)
        init(_ start: Int64) { ms = Atomic(start) }
        var now: Int64 {
            readCount.add(1, ordering: .relaxed)
            return ms.load(ordering: .relaxed)
        }
        var reads: Int { readCount.load(ordering: .relaxed) }
        func advance(seconds: Int64) { ms.add(seconds * 1000, ordering: .relaxed) }
    }

    /// Waits until the server has read the store's clock `times` more times. While no request is made, what reads it
    /// is the job runner's schedule check (every 50 ms here): a window of that many checks however slow the machine,
    /// instead of a fixed time in which a loaded machine may run none.
    static func scheduleChecks(_ times: Int, on clock: ManualClock) async throws {
        let from = clock.reads
        try await waitUntil("\(times) schedule checks read the clock") { clock.reads >= from + times }
    }

    typealias Setup = NotificationJobTests.Setup

    /// 2026-12-01T08:00:00Z: the test's "now".
    static let start: Int64 = 1_796_112_000_000

    static func server(_ setup: Setup, clock: ManualClock) async throws -> (TestServer, SQLiteRegistry) {
        let registry = try SQLiteRegistry(path: setup.config.database, nowMs: { clock.now })
        var jobSettings = JobRunner.Settings()
        jobSettings.scheduleCheckSeconds = 0.05
        let server = PushServer(
            configuration: setup.config, registry: registry, keys: APIKeys(apps: setup.config.apps),
            credentials: ["example": .init(loaded: true, kind: "certificate", daysLeft: 365)], jobSettings: jobSettings)
        let running = try await server.start(host: "127.0.0.1", port: 0)
        return (TestServer(running: running, store: registry, directory: URL(fileURLWithPath: setup.dir + "/unused")), registry)
    }

    func post(_ s: TestServer, _ body: String) async throws -> TestServer.Reply {
        try await s.request("POST", "/v1/apps/example/notifications", key: "send", contentType: "application/json", body: body)
    }

    func status(_ s: TestServer, _ id: String) async throws -> JSONValue {
        try #require(try await s.request("GET", "/v1/apps/example/notifications/\(id)", key: "send").json)
    }

    @Test func aScheduledJobWaitsForItsTimeEvenAcrossARestartThenGoesOut() async throws {
        let setup = try await Setup.make()
        let clock = ManualClock(Self.start)
        var (s, registry) = try await Self.server(setup, clock: clock)
        let tokens = try setup.seed(registry, 20)
        // An hour ahead, as RFC 3339 with an offset: 09:00+01:00 is 08:00Z, so 10:00+01:00 is 09:00Z.
        let r = try await post(s, #"{"id":"digest","all":true,"alert":"Morning","at":"2026-12-01T10:00:00+01:00"}"#)
        #expect(r.status == 202)
        #expect(r.json?["state"]?.stringValue == "pending")
        #expect(r.json?["at"]?.stringValue == "2026-12-01T09:00:00Z")
        // Real time passes (many schedule checks), the store's clock does not reach the time: nothing is sent.
        clock.advance(seconds: 3599)
        // Schedule checks in which the scheduler could (wrongly) start it: that nothing is sent is what is tested.
        try await Self.scheduleChecks(5, on: clock)
        #expect(setup.simulator.received.isEmpty)
        #expect(try await status(s, "digest")["state"]?.stringValue == "pending")
        // /metrics shows the waiting job's progress (nothing done).
        let metrics = String(decoding: try await s.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"pushprovider_job_devices_done{app="example",job="digest"} 0"#))
        // The same request again is idempotent and does not start it early.
        let again = try await post(s, #"{"id":"digest","all":true,"alert":"Morning","at":"2026-12-01T10:00:00+01:00"}"#)
        #expect(again.status == 202 && again.json?["state"]?.stringValue == "pending")
        try await Self.scheduleChecks(5, on: clock)
        #expect(setup.simulator.received.isEmpty)
        // A restart keeps it (it is stored), and still does not send it early.
        try await s.stop()
        (s, registry) = try await Self.server(setup, clock: clock)
        try await Self.scheduleChecks(5, on: clock)
        #expect(setup.simulator.received.isEmpty)
        // Its time comes: the new server sends it to every device.
        clock.advance(seconds: 1)
        var final = JSONValue.null
        try await waitUntil("digest completed") {
            final = try await status(s, "digest")
            return final["state"]?.stringValue == "completed"
        }
        #expect(final["state"]?.stringValue == "completed")
        #expect(final["accepted"] == .int(20))
        #expect(final["at"]?.stringValue == "2026-12-01T09:00:00Z")
        let received = setup.simulator.received
        #expect(Set(received.map(\.request.token)) == Set(tokens) && received.count == 20)
        let payload = try JSONValue(parsing: try #require(received.first).request.payload)
        #expect(payload == (try JSONValue(parsing: #"{"aps":{"alert":"Morning"}}"#)))
        try await s.stop()
        try await setup.stop()
    }

    @Test func aCancelledScheduledJobNeverGoesOutAndIsListedAsCancelled() async throws {
        let setup = try await Setup.make()
        let clock = ManualClock(Self.start)
        let (s, registry) = try await Self.server(setup, clock: clock)
        let tokens = try setup.seed(registry, 5)
        // Epoch seconds work too: ten minutes ahead.
        let at = Self.start / 1000 + 600
        let r = try await post(s, #"{"id":"promo","tokens":["\#(tokens[0].hex)"],"alert":"Sale","at":\#(at)}"#)
        #expect(r.status == 202 && r.json?["at"]?.stringValue == "2026-12-01T08:10:00Z")
        let cancelled = try await s.request("DELETE", "/v1/apps/example/notifications/promo", key: "send")
        #expect(cancelled.status == 200)
        #expect(cancelled.json?["state"]?.stringValue == "cancelled")
        // Cancelling again answers the same; an unknown id or another app's key does not cancel anything.
        #expect(try await s.request("DELETE", "/v1/apps/example/notifications/promo", key: "send").json?["state"]?.stringValue == "cancelled")
        #expect(try await s.request("DELETE", "/v1/apps/example/notifications/nope", key: "send").status == 404)
        #expect(try await s.request("DELETE", "/v1/apps/example/notifications/promo", key: "reg").status == 403)
        // Its time passes: nothing is sent, and it is listed as cancelled.
        clock.advance(seconds: 3600)
        // Schedule checks in which a cancelled job would (wrongly) start: that nothing is sent is what is tested.
        try await Self.scheduleChecks(5, on: clock)
        #expect(setup.simulator.received.isEmpty)
        let list = try await s.request("GET", "/v1/apps/example/notifications?state=cancelled", key: "send")
        #expect(list.status == 200)
        let jobs = try #require(list.json?["jobs"]?.arrayValue)
        #expect(jobs.map { $0["id"]?.stringValue } == ["promo"])
        #expect(jobs.first?["at"]?.stringValue == "2026-12-01T08:10:00Z")
        // The same id again is refused rather than silently dropped.
        let reused = try await post(s, #"{"id":"promo","tokens":["\#(tokens[0].hex)"],"alert":"Sale","at":\#(at)}"#)
        #expect(reused.status == 409 && reused.errorCode == "job_cancelled")
        try await s.stop()
        try await setup.stop()
    }

    @Test func cancellingARunningJobStopsItWhereItIs() async throws {
        let setup = try await Setup.make(responseDelayMs: 200)
        let clock = ManualClock(Self.start)
        let (s, registry) = try await Self.server(setup, clock: clock)
        _ = try setup.seed(registry, 3000)
        let r = try await post(s, #"{"id":"big","all":true,"alert":"Oops"}"#)
        #expect(r.status == 202)
        try await waitUntil(every: .milliseconds(10), "50 notifications sent") { setup.simulator.received.count >= 50 }
        let deadline = Date().addingTimeInterval(30)
        let cancelled = try await s.request("DELETE", "/v1/apps/example/notifications/big", key: "send")
        #expect(cancelled.status == 200 && cancelled.json?["state"]?.stringValue == "cancelled")
        let before = setup.simulator.received.count  // once the cancel is acknowledged
        // The requests in flight (at most the window, 500) finish and their outcomes are kept; nothing more goes
        // out.
        var settled = setup.simulator.received.count
        var stableSince = Date()
        try await waitUntil(deadline: .seconds(deadline.timeIntervalSinceNow), every: .milliseconds(100), "no request for 1.5 s") {
            let now = setup.simulator.received.count
            if now != settled { (settled, stableSince) = (now, Date()) }
            return Date().timeIntervalSince(stableSince) >= 1.5
        }
        // The behaviour under test is that nothing happens: after those 1.5 s without a request, another window
        // (over twice the simulator's 200 ms answer delay) in which no request goes out.
        try await Task.sleep(for: .milliseconds(500))
        #expect(setup.simulator.received.count == settled)
        #expect(settled <= before + 500, "more than the in-flight window went out after the cancel was acknowledged")
        let gone = try await s.request("GET", "/v1/apps/example/notifications/big", key: "send")
        #expect(gone.status == 404 && gone.errorCode == "job_cancelled", "a cancelled (deleted) job is gone from its route")
        let listed = try await s.request("GET", "/v1/apps/example/notifications?state=cancelled", key: "send")
        #expect(listed.json?["jobs"]?.arrayValue?.first?["id"]?.stringValue == "big")
        let read1 = try await registry.run { [registry = registry] _ in try registry.broadcastCounts(id: "big") }
        #expect(read1.done == settled, "every notification that went out has its outcome committed")
        #expect(gone.json?["error"]?["message"]?.stringValue?.contains("\(settled) devices had an outcome") == true)
        // A cancelled job stays cancelled: the server's adoption and a restart do not resume it.
        let read2 = try await registry.run { [registry = registry] _ in try registry.broadcast(id: "big") }
        #expect(read2?.state == .cancelled)
        let done = try await s.request("DELETE", "/v1/apps/example/notifications/big", key: "send")
        #expect(done.status == 200)
        try await s.stop()
        try await setup.stop()
    }

    @Test func aCompletedJobCannotBeCancelledAndBadTimesAreRejected() async throws {
        let setup = try await Setup.make()
        let clock = ManualClock(Self.start)
        let (s, registry) = try await Self.server(setup, clock: clock)
        _ = try setup.seed(registry, 3)
        #expect(try await post(s, #"{"id":"now","all":true,"alert":"a"}"#).status == 202)
        try await waitUntil("job now completed") { try await status(s, "now")["state"]?.stringValue == "completed" }
        let late = try await s.request("DELETE", "/v1/apps/example/notifications/now", key: "send")
        #expect(late.status == 409 && late.errorCode == "job_completed")
        for at in [#""tomorrow""#, #""2026-12-01T09:00:00""#, #""2026-13-01T09:00:00Z""#, "-5", "true", #""1796112000""#, #""2026-12-01 09:00:00Z""#] {
            let bad = try await post(s, #"{"all":true,"alert":"a","at":\#(at)}"#)
            #expect(bad.status == 400 && bad.errorCode == "invalid_at", "at: \(at)")
        }
        // A time already past is sent at once.
        #expect(try await post(s, #"{"id":"past","all":true,"alert":"b","at":"2026-11-30T08:00:00Z"}"#).status == 202)
        try await waitUntil("job past completed") { try await status(s, "past")["state"]?.stringValue == "completed" }
        #expect(try await status(s, "past")["accepted"] == .int(3))
        let read3 = try await registry.run { [registry = registry] _ in try registry.broadcasts(states: BroadcastState.allCases) }
        #expect(read3.count == 2)
        try await s.stop()
        try await setup.stop()
    }
}
