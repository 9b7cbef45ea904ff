import PushSimulator
import NIOCore
import NIOHTTP2
import PushCore
import Testing
import func TestSupport.waitUntil

/// Every fault, observed from the client side.
@Suite(.timeLimit(.minutes(2)))
struct SimulatorFaultsTests {
    @Test func goAwayAfterNStreamsNamesTheLastProcessedStream() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.goAwayAfterStreams = 3 }) { f in
            let client = try await f.connect()
            let first = try await client.send(notification())
            #expect(first.status == 200)
            // Four more in one burst: streams 3 and 5 are processed, 7 and 9 are beyond the GOAWAY.
            let futures = (0..<4).map { i in
                Task { try await client.send(notification(token: hexToken(UInt8(i)))) }
            }
            var statuses: [Int?] = []
            for task in futures {
                do { statuses.append(try await task.value.status) } catch {
                    print("goaway test: \(error)")
                    statuses.append(nil)
                }
            }
            try await client.waitForClose()
            let goAways = try await client.goAways
            #expect(goAways.count == 1)
            #expect(goAways.first?.lastStreamID == HTTP2StreamID(5))
            #expect(goAways.first?.code == .noError)
            #expect(goAways.first?.debug == #"{"reason":"Shutdown"}"#)
            #expect(statuses.compactMap { $0 }.count == 2)
            #expect(f.simulator.counters.accepted == 3)
            #expect(f.simulator.counters.goAways == 1)
            // A new connection gets its own budget.
            let again = try await f.connect()
            #expect(try await again.send(notification()).status == 200)
            await again.close()
        }
    }

    /// RFC 9113 §6.8: after a GOAWAY the server ignores frames of streams above its last-stream-id. It closed the
    /// connection on their DATA instead (NIO reports it as NoSuchStream), which destroyed a stream below the
    /// last-stream-id still waiting for its body: libcurl 7.88 saw "stream 1 was not closed cleanly" and the sender
    /// flagged a request APNs never processed.
    @Test func framesOfAStreamAboveTheGoAwayAreIgnoredAndAnOpenStreamBelowItIsStillAnswered() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.goAwayAfterStreams = 2 }) { f in
            let client = try await f.connect()
            // Stream 1: its HEADERS now, its body later. Stream 3 is the second stream: the GOAWAY names it.
            let pending = notification(token: hexToken(1))
            let (first, answer) = try await client.open(pending)
            // Streams 3 and 5 in one write, before the client can see the GOAWAY: stream 5 is above the last-stream-id,
            // so its HEADERS and DATA are discarded, unprocessed, and it gets no answer.
            await #expect(throws: (any Error).self) {
                _ = try await client.sendBatch(
                    [notification(token: hexToken(3)), notification(token: hexToken(5))], timeout: .seconds(1))
            }
            client.finish(first, body: pending.body)
            let late = try await client.withTimeout(.seconds(10)) { answer }
            #expect(late.status == 200)
            let goAways = try await client.goAways
            #expect(goAways.map(\.lastStreamID) == [HTTP2StreamID(3)])
            #expect(f.simulator.counters.accepted == 2)
            await client.close()
        }
    }

    @Test func aRejectionDropsTheStreamLimitUntilTheNextSuccess() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.dropStreamLimitAfterRejection = true }) { f in
            let client = try await f.connect()
            // A rejected request, then at once three good ones the client sent before it saw the new limit.
            let r = try await client.sendBursts([
                [notification(token: "zz")],
                [notification(token: hexToken(1)), notification(token: hexToken(2)), notification(token: hexToken(3))],
            ])
            #expect(r[0].status == 400)
            #expect(r[1].status == 200)
            #expect(r[2].resetCode == .refusedStream)
            #expect(r[3].resetCode == .refusedStream)
            let after = try await client.send(notification())
            #expect(after.status == 200)
            let limits = try await client.settings.compactMap { list in
                list.first(where: { $0.parameter == .maxConcurrentStreams })?.value
            }
            #expect(limits == [1000, 1, 1000])
            await client.close()
            #expect(f.simulator.counters.refusedStreams == 2)
            #expect(f.simulator.counters.accepted == 2)
        }
    }

    /// A client that opens two streams on a new connection before the server's SETTINGS (limit 1) arrived, as libcurl
    /// does: the limit holds from the first stream, and the second is answered as ``SimulatorFaults/excessStream`` says.
    @Test(arguments: SimulatorFaults.ExcessStreamAnswer.allCases)
    func aStreamOverTheInitialLimitIsAnsweredAsConfigured(_ answer: SimulatorFaults.ExcessStreamAnswer) async throws {
        try await SimulatorFixture.run(.none, configure: { $0.maxConcurrentStreams = 1; $0.faults.excessStream = answer }) { f in
            let client = try await f.connect(firstBurst: [notification(), notification(token: hexToken(1))])
            let opened = try await client.firstBurst
            let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
            switch answer {
            case .refuse, .protocolError:
                let excess = try await client.withTimeout(.seconds(10)) { opened[1].1 }
                let expected: HTTP2ErrorCode = answer == .refuse ? .refusedStream : .protocolError
                #expect(excess.resetCode == expected)
                client.finish(opened[0].0, body: body)
                let first = try await client.withTimeout(.seconds(10)) { opened[0].1 }
                #expect(first.status == 200)
                #expect(f.simulator.counters.refusedStreams == (answer == .refuse ? 1 : 0))
            case .closeConnection:
                try await client.waitForClose(timeout: .seconds(10))
                let goAways = try await client.goAways
                #expect(goAways.map(\.lastStreamID) == [HTTP2StreamID(1)])
                #expect(goAways.map(\.code) == [.protocolError])
                #expect(f.simulator.counters.excessClosures == 1)
                #expect(f.simulator.counters.accepted == 0)
            }
            #expect(f.simulator.counters.excessStreams == 1)
            await client.close()
        }
    }

    /// A lowered limit holds only once the client acknowledged the SETTINGS that carried it (RFC 9113 §6.5.3): streams
    /// opened alongside the stream that lowered it are served; the limit comes back after `forStreams` more.
    @Test func aLoweredLimitHoldsOnlyAfterTheClientAcknowledgedIt() async throws {
        try await SimulatorFixture.run(.none, configure: {
            $0.faults.excessStream = .closeConnection
            $0.faults.streamLimitChange = .init(afterStreams: 1, limit: 1, forStreams: 3)
        }) { f in
            // Three streams in one flight (before the client read the SETTINGS that lowers the limit, sent as stream 1
            // opens).
            let client = try await f.connect(firstBurst: [notification(), notification(token: hexToken(1)), notification(token: hexToken(2))])
            let opened = try await client.firstBurst
            let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
            for (id, _) in opened { client.finish(id, body: body) }
            for (_, answer) in opened {
                #expect(try await client.withTimeout(.seconds(10)) { answer }.status == 200)
            }
            #expect(try await client.send(notification(token: hexToken(3))).status == 200)
            try await waitUntil("the limit is advertised again") {
                let limits = try await client.settings.compactMap { list in
                    list.first(where: { $0.parameter == .maxConcurrentStreams })?.value
                }
                return limits == [1000, 1, 1000]
            }
            #expect(f.simulator.counters.excessStreams == 0)
            #expect(f.simulator.counters.streamLimitChanges == 2)
            #expect(f.simulator.counters.accepted == 4)
            await client.close()
        }
    }

    @Test func resetsTheConnectionAfterNRequests() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.resetAfterRequests = 2 }) { f in
            let client = try await f.connect()
            #expect(try await client.send(notification()).status == 200)
            #expect(try await client.send(notification()).status == 200)
            await #expect(throws: (any Error).self) { try await client.send(notification()) }
            try await client.waitForClose()
            #expect(try await client.goAways.isEmpty)
            #expect(f.simulator.counters.resets == 1)
            #expect(f.simulator.counters.accepted == 2)
        }
    }

    @Test func delaysResponses() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.responseDelay = .milliseconds(300) }) { f in
            let client = try await f.connect()
            let start = ContinuousClock.now
            #expect(try await client.send(notification()).status == 200)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
            await client.close()
            // Half the streams delayed: some answers arrive at once, some late. Each request gets its own
            // connection and clock, so a delayed answer cannot hold up the timing of another.
            f.simulator.faults.delayFraction = 0.5
            // A wide gap between prompt and delayed answers, so a loaded machine cannot blur them.
            f.simulator.faults.responseDelay = .seconds(5)
            let clients = try await withThrowingTaskGroup(of: H2TestClient.self) { group in
                for _ in 0..<16 { group.addTask { try await f.connect() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let durations = try await withThrowingTaskGroup(of: Duration.self) { group in
                for c in clients {
                    group.addTask {
                        let start = ContinuousClock.now
                        _ = try await c.send(notification())
                        return ContinuousClock.now - start
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for c in clients { await c.close() }
            let late = durations.filter { $0 >= .seconds(5) }.count
            // 16 fair coin flips: all or none late has probability 2^-15.
            #expect(late > 0 && late < 16, "\(late) of 16 late")
        }
    }

    @Test func answersAFractionWith429And503() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.tooManyRequestsFraction = 1 }) { f in
            let client = try await f.connect()
            let all429 = try await client.sendBatch(Array(repeating: notification(), count: 20))
            #expect(all429.allSatisfy { $0.status == 429 && reasonOf($0) == "TooManyRequests" })
            f.simulator.faults = SimulatorFaults(serviceUnavailableFraction: 1)
            let all503 = try await client.sendBatch(Array(repeating: notification(), count: 20))
            #expect(all503.allSatisfy { $0.status == 503 && reasonOf($0) == "ServiceUnavailable" })
            f.simulator.faults = SimulatorFaults(tooManyRequestsFraction: 0.3, serviceUnavailableFraction: 0.3)
            let mixed = try await client.sendBatch(Array(repeating: notification(), count: 200))
            await client.close()
            let statuses = Set(mixed.compactMap(\.status))
            #expect(statuses == [200, 429, 503])
            #expect(f.simulator.counters.accepted == mixed.filter { $0.status == 200 }.count)
        }
    }

    @Test func aBlackHoleNeverFinishesTheHandshake() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.blackHole = true }) { f in
            let start = ContinuousClock.now
            // The TCP connection is accepted but the handshake never completes, so the client gives up
            // (on a loaded machine the timeout may already hit during connect: any failure will do).
            await #expect(throws: (any Error).self) {
                _ = try await H2TestClient.connect(port: f.port, caPEM: f.pki.ca.certificatePEM, timeout: .seconds(3))
            }
            #expect(ContinuousClock.now - start >= .seconds(3))
            // The accept is counted on the server's event loop, which may lag the client's timeout under load.
            try await waitUntil(deadline: .seconds(10), "the simulator counted the connection") { f.simulator.counters.connections >= 1 }
            #expect(f.simulator.counters.connections == 1)
            f.simulator.faults.blackHole = false
            let client = try await f.connect()
            #expect(try await client.send(notification()).status == 200)
            await client.close()
        }
    }

    @Test func faultsCanBeSwitchedOffAtRuntime() async throws {
        try await SimulatorFixture.run(.none, configure: { $0.faults.internalServerErrorFraction = 1 }) { f in
            let client = try await f.connect()
            let failed = try await client.send(notification())
            f.simulator.faults = SimulatorFaults()
            #expect(f.simulator.faults.isEmpty)
            let ok = try await client.send(notification())
            await client.close()
            #expect(failed.status == 500 && reasonOf(failed) == "InternalServerError")
            #expect(ok.status == 200)
        }
    }
}
