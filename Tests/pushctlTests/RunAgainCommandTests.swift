import Foundation
import PushCore
import PushStore
import Testing

/// "Run this id again?" through the binary: every kind of job (a broadcast, a scheduled send, a scheduled broadcast, a
/// local-time job, a Live Activity start) × cancelled / completed / another job under the id, at every entry point that
/// takes an id (`broadcast --id`, `send|broadcast --at --id`, `broadcast --local-time --id`, `live-activity start --id`).
/// A cancelled id is refused everywhere (exit 1, nothing sent, nothing stored); another job under an id is a usage
/// error (exit 2); the same request for a completed job sends nothing again (exit 0).
@Suite(.timeLimit(.minutes(2))) struct RunAgainCommandTests {
    typealias World = BroadcastCommandTests.World

    func run(_ w: World, _ args: [String]) async throws -> CLI.Result {
        try await CLI.run(args + ["--config", w.config, "--app", "example"])
    }

    @Test func aCancelledIdOfEveryKindOfJobIsRefusedByEveryEntryPoint() async throws {
        var w = try await World.make(tokens: 5, tokenAuth: true)
        defer { w.stop() }
        let later = JobsCommandTests.rfc3339(secondsFromNow: 3600)
        // Four jobs, each stored for later and then cancelled.
        let stored: [(id: String, args: [String])] = [
            ("bcast", ["broadcast", "--id", "bcast", "--alert", "a", "--at", later]),
            ("promo", ["send", "--token", World.token(1), "--alert", "b", "--at", later, "--id", "promo"]),
            ("morning", ["broadcast", "--id", "morning", "--alert", "c", "--local-time", "09:00"]),
            ("start", ["live-activity", "start", "--attributes-type", "Score", "--attributes", "{}", "--content-state", "{}",
                       "--title", "t", "--alert", "go", "--token", World.token(2), "--at", later, "--id", "start"]),
        ]
        for job in stored {
            let r = try await run(w, job.args)
            #expect(r.status == 0, "\(job.args): \(r.stderr)")
            let cancel = try await run(w, ["jobs", "cancel", job.id])
            #expect(cancel.status == 0, "\(job.id): \(cancel.stderr)")
        }
        let registry = try w.openRegistry()
        let before = try await registry.run { try $0.broadcasts(app: "example", states: BroadcastState.allCases).count }
        // Each cancelled id at each entry point: the same request again and other requests under it.
        for job in stored {
            let requests: [[String]] = [
                job.args,
                ["broadcast", "--id", job.id, "--alert", "x"],
                ["broadcast", "--id", job.id, "--alert", "x", "--at", later],
                ["send", "--token", World.token(3), "--alert", "x", "--at", later, "--id", job.id],
                ["broadcast", "--id", job.id, "--alert", "x", "--local-time", "10:00"],
                ["live-activity", "start", "--attributes-type", "Score", "--attributes", "{}", "--content-state", "{}",
                 "--title", "t", "--alert", "go", "--token", World.token(2), "--id", job.id],
            ]
            for args in requests {
                let r = try await run(w, args)
                #expect(r.status == 1, "\(job.id) \(args): \(r.status) \(r.stderr)")
                #expect(r.stderr.contains("was cancelled") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
            }
        }
        #expect(try w.received().isEmpty)
        #expect(try await registry.run { try $0.broadcasts(app: "example", states: BroadcastState.allCases).count } == before)
    }

    /// `jobs list` shows a local-time job once, its waves folded into it (as the API does), and says when --limit cut.
    @Test func jobsListFoldsALocalTimeJobsWavesAndSaysWhenItCutTheList() async throws {
        var w = try await World.make(tokens: 2)
        defer { w.stop() }
        #expect(try await run(w, ["broadcast", "--id", "morning", "--alert", "c", "--local-time", "09:00"]).status == 0)
        #expect(try await run(w, ["send", "--token", World.token(1), "--alert", "b", "--at", JobsCommandTests.rfc3339(secondsFromNow: 3600), "--id", "promo"]).status == 0)
        let waves = try await w.openRegistry().run { try $0.localTimeJob(id: "morning", app: "example") }?.waves.count ?? 0
        #expect(waves > 20)
        let list = try await run(w, ["jobs", "list"])
        #expect(list.status == 0 && list.stderr.isEmpty, "\(list.stderr)")
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == 3, "\(list.stdout)")
        #expect(rows.first?.last == "WAVES")
        #expect(rows.dropFirst().map { $0[0] } == ["promo", "morning"])
        #expect(rows.last?.last == String(waves) && rows.last?[1] == "pending")
        #expect(!list.stdout.contains("morning~"))
        let json = try await run(w, ["jobs", "list", "--json"])
        let objects = try json.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(objects.map { $0["id"]?.stringValue } == ["promo", "morning"] && objects.last?["waves"] == .int(Int64(waves)))
        let cut = try await run(w, ["jobs", "list", "--limit", "1"])
        #expect(cut.status == 0 && cut.stdout.split(separator: "\n").count == 2)
        #expect(cut.stderr.contains("showing the newest 1 of 2 jobs"), "\(cut.stderr)")
    }

    @Test func aCompletedIdIsNotSentAgainAndAnotherJobUnderAnIdIsAUsageError() async throws {
        var w = try await World.make(tokens: 5)
        defer { w.stop() }
        let first = try await run(w, ["broadcast", "--id", "once", "--alert", "a"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try w.received().count == 5)
        let again = try await run(w, ["broadcast", "--id", "once", "--alert", "a"])
        #expect(again.status == 0 && again.stderr.contains("already completed"), "\(again.stderr)")
        #expect(try w.received().count == 5)
        for args in [["broadcast", "--id", "once", "--alert", "other"], ["send", "--token", World.token(1), "--alert", "a", "--at", JobsCommandTests.rfc3339(secondsFromNow: 60), "--id", "once"],
                     ["broadcast", "--id", "once", "--alert", "a", "--local-time", "09:00"]] {
            let r = try await run(w, args)
            #expect(r.status == 2 && r.stderr.contains("exists with a different"), "\(args): \(r.status) \(r.stderr)")
        }
        #expect(try w.received().count == 5)
    }
}

/// The first hour's usage errors: a misspelt subcommand is named as one (with the nearest name), and a negative badge
/// is refused saying what APNs takes; each exit 2, one line.
@Suite(.timeLimit(.minutes(2))) struct UsageErrorTests {
    @Test(arguments: [
        (["sned", "--app", "example"], "unknown command 'sned' for 'pushctl' (did you mean 'send'?)"),
        (["tokens", "lst", "--app", "example"], "unknown command 'lst' for 'pushctl tokens' (did you mean 'list'?)"),
        (["jbos"], "unknown command 'jbos' for 'pushctl' (did you mean 'jobs'?)"),
    ]) func aMisspeltSubcommandIsNamedWithTheNearestOne(_ args: [String], _ message: String) async throws {
        let r = try await CLI.run(args)
        #expect(r.status == 2)
        #expect(r.stderr == "pushctl: \(message)\n", "\(r.stderr)")
    }

    @Test func aNegativeBadgeSaysWhatAPNsTakes() async throws {
        let r = try await CLI.run(["payload", "--badge", "-1"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--badge must be a non-negative integer") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        let ok = try await CLI.run(["payload", "--badge", "3"])
        #expect(ok.status == 0 && ok.stdout.contains(#""badge":3"#), "\(ok.stderr)")
    }
}
