import PushCore
import Testing

/// The run-again decision table, row by row (the entry points' own tests run it through the binary and the API).
@Suite struct RunAgainTests {
    typealias Found = RunAgain.Found

    @Test(arguments: [RunAgain.Request.run, .store, .queued(retryDeferred: false), .queued(retryDeferred: true)])
    func aCancelledIdIsRefusedForEveryRequestWithExit1And409(_ request: RunAgain.Request) {
        for same in [true, false] {
            let decision = RunAgain.decide(id: "morning", found: Found(state: .cancelled, sameJob: same), request: request)
            guard case .refuse(let refusal) = decision else { Issue.record("\(request) same=\(same): \(decision)"); continue }
            #expect(refusal.exitCode == 1 && refusal.httpStatus == 409 && refusal.code == "job_cancelled")
            #expect(!decision.runs)
        }
    }

    @Test func aLocalTimeJobWithACancelledWaveIsCancelledEvenWhenOtherWavesCompleted() {
        let found = Found.localTime(waveStates: [.completed, .completed, .cancelled], sameJob: false)
        #expect(found.state == .cancelled)
        guard case .refuse(let refusal) = RunAgain.decide(id: "morning", found: found, request: .run) else {
            Issue.record("not refused"); return
        }
        #expect(refusal.exitCode == 1)
        #expect(Found.localTime(waveStates: [.completed, .pending], sameJob: true).state == .running)
    }

    @Test func theRestOfTheTable() {
        func d(_ f: Found?, _ r: RunAgain.Request) -> RunAgain.Decision { RunAgain.decide(id: "x", found: f, request: r) }
        #expect(d(nil, .run) == .create && d(nil, .store) == .create && d(nil, .queued(retryDeferred: false)) == .done)
        if case .refuse(let r) = d(Found(state: .pending, sameJob: false), .run) {
            #expect(r.exitCode == 2 && r.httpStatus == 409 && r.code == "id_conflict")
        } else { Issue.record("another job under the id is not refused") }
        #expect(d(Found(state: .pending, sameJob: true, waiting: true), .run) == .wait)
        #expect(d(Found(state: .completed, sameJob: true), .run) == .done)
        #expect(d(Found(state: .completed, sameJob: true, deferred: 3), .run) == .retryDeferred(3))
        #expect(d(Found(state: .running, sameJob: true, heldElsewhere: true), .run) == .join)
        #expect(d(Found(state: .running, sameJob: true), .run) == .resume)
        #expect(d(Found(state: .interrupted, sameJob: true), .run) == .resume)
        #expect(d(Found(state: .interrupted, sameJob: true), .store) == .wait)
        #expect(d(Found(state: .completed, sameJob: true), .queued(retryDeferred: false)) == .done)
        #expect(d(Found(state: .completed, sameJob: true), .queued(retryDeferred: true)).runs)
        #expect(d(Found(state: .pending, sameJob: true), .queued(retryDeferred: false)) == .resume)
    }
}
