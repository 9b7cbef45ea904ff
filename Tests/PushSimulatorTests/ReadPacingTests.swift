import PushSimulator
import NIOCore
import NIOHTTP2
import NIOPosix
import PushCore
import Testing

/// Read pacing (`SimulatorConfiguration.readPacing`) only changes when the simulator reads, never what it
/// answers: every request of a streaming client, of a client that waits for each answer and of a connection
/// closed while a read is held back is served as without pacing.
@Suite(.timeLimit(.minutes(2)))
struct ReadPacingTests {
    /// A simulator pacing reads by `readPacing`, and its clients, on an event loop of their own: on NIO's shared
    /// loops (two threads here) the other suites' servers and TLS handshakes ran between an answer and the next read,
    /// and these tests, which are about when the server reads, measured that instead.
    static func onOwnLoop(readPacing: Duration, _ body: (SimulatorFixture) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await SimulatorFixture.run(configure: {
                $0.readPacing = readPacing
                $0.eventLoopGroup = group
            }, body)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    @Test func pacesReadsOneMillisecondApartByDefault() throws {
        let configuration = SimulatorConfiguration(serverCertificatePEM: "", serverKeyPEM: "")
        #expect(configuration.readPacing == .milliseconds(1))
    }

    /// A long pacing interval, so reads are certainly held while the client streams bursts.
    @Test func answersEveryRequestOfAClientThatStreams() async throws {
        try await Self.onOwnLoop(readPacing: .milliseconds(20)) { f in
            let client = try await f.connect()
            let bursts = (0..<40).map { b in (0..<5).map { i in notification(token: hexToken(UInt8(b * 5 + i))) } }
            let responses = try await client.sendBursts(bursts)
            #expect(responses.count == 200)
            #expect(responses.allSatisfy { $0.status == 200 })
            // Answers arrive on their own streams, whatever the batches the simulator read them in.
            #expect(Set(responses.map(\.streamID)).count == 200)
            let wrong = try await client.send(notification(token: "12345"))
            #expect(wrong.status == 400)
            #expect(reasonOf(wrong) == "BadDeviceToken")
            await client.close()
            #expect(f.simulator.counters.accepted == 200)
            #expect(f.simulator.counters.requests == 201)
            #expect(Set(f.simulator.received.map(\.request.token.hex)).count == 200)
        }
    }

    @Test func answersAClientThatWaitsForEachAnswer() async throws {
        try await Self.onOwnLoop(readPacing: .milliseconds(20)) { f in
            let client = try await f.connect()
            let answers = try await client.sendOneAtATime((0..<30).map { notification(token: hexToken(UInt8($0))) })
            #expect(answers.count == 30 && answers.allSatisfy { $0.status == 200 })
            await client.close()
            #expect(f.simulator.counters.accepted == 30)
            // One request per read, reads less than the interval apart: pacing starts and holds reads (a few, until
            // the holds prove poor) — what the unpaced case below must never see.
            #expect(f.simulator.counters.heldReads > 0)
        }
    }

    /// The client goes away while the simulator holds a read back: the held read must not outlive the
    /// connection, and the simulator keeps serving new ones.
    @Test func survivesAConnectionClosedWhileAReadIsHeld() async throws {
        try await Self.onOwnLoop(readPacing: .milliseconds(200)) { f in
            for round in 0..<3 {
                let client = try await f.connect()
                let bursts = (0..<4).map { _ in Array(repeating: notification(), count: 10) }
                let responses = try await client.sendBursts(bursts)
                #expect(responses.allSatisfy { $0.status == 200 }, "round \(round)")
                await client.close()
            }
            #expect(f.simulator.counters.accepted == 120)
            #expect(f.simulator.counters.connections == 3)
        }
    }

    /// The clients of the paced cases above — one that waits for each answer (whose reads pacing holds) and one
    /// that streams bursts — with pacing off: every request answered, and not one read held back.
    @Test func readsAsSoonAsDataArrivesWhenPacingIsOff() async throws {
        try await Self.onOwnLoop(readPacing: .zero) { f in
            let client = try await f.connect()
            let answers = try await client.sendOneAtATime((0..<30).map { notification(token: hexToken(UInt8($0))) })
            #expect(answers.count == 30 && answers.allSatisfy { $0.status == 200 })
            let bursts = (0..<40).map { b in (0..<5).map { i in notification(token: hexToken(UInt8(b * 5 + i))) } }
            let responses = try await client.sendBursts(bursts)
            #expect(responses.count == 200)
            #expect(responses.allSatisfy { $0.status == 200 })
            await client.close()
            #expect(f.simulator.counters.accepted == 230)
            #expect(f.simulator.counters.heldReads == 0)
        }
    }
}
