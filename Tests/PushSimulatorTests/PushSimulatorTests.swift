import PushSimulator
import Foundation
import NIOHTTP2
import PushCore
import Testing

@Suite(.timeLimit(.minutes(2)))
struct PushSimulatorTests {
    @Test func acceptsANotificationAndRecordsEveryField() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect()
            let notificationId = "123e4567-e89b-42d3-a456-426614174000"
            let response = try await client.send(
                notification(headers: [
                    ("apns-topic", SimulatorFixture.topic), ("apns-id", notificationId), ("apns-push-type", "alert"),
                    ("apns-priority", "5"), ("apns-expiration", "1700000000"), ("apns-collapse-id", "game-1"),
                ]))
            await client.close()
            #expect(response.status == 200)
            #expect(response.header("apns-id") == notificationId)
            #expect(NotificationID.isValid(response.header("apns-unique-id") ?? ""))
            #expect(response.body.isEmpty)
            let received = f.simulator.received
            #expect(received.count == 1)
            let first = try #require(received.first)
            #expect(first.request.token.hex == hexToken())
            #expect(first.request.topic == SimulatorFixture.topic)
            #expect(first.request.pushType == .alert)
            #expect(first.request.priority == .conserve)
            #expect(first.request.expiration == 1_700_000_000)
            #expect(first.request.collapseId == "game-1")
            #expect(first.request.notificationId == notificationId)
            #expect(first.uniqueId == response.header("apns-unique-id"))
            #expect(!first.apnsIdGenerated)
            #expect(try JSONValue(parsing: first.request.payload) == JSONValue(parsing: #"{"aps":{"alert":"hi"}}"#))
            let counters = f.simulator.counters
            #expect(counters.accepted == 1)
            #expect(counters.requests == 1)
            #expect(counters.byStatus == [200: 1])
        }
    }

    @Test func answersWithANewApnsIdWhenTheRequestHasNone() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect()
            let response = try await client.send(notification())
            await client.close()
            #expect(response.status == 200)
            let id = try #require(response.header("apns-id"))
            #expect(NotificationID.isValid(id))
            #expect(f.simulator.received.first?.request.notificationId == id)
            #expect(f.simulator.received.first?.apnsIdGenerated == true)
            #expect(f.simulator.received.first?.request.priority == .immediate)
        }
    }

    @Test func servesHTTP2ToAClientThatOffersNoALPN() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect(alpn: [])
            let response = try await client.send(notification())
            await client.close()
            #expect(response.status == 200)
        }
    }

    @Test func advertisesAPNsStreamLimit() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect()
            let settings = try await client.settings
            await client.close()
            let first = try #require(settings.first)
            #expect(first.contains(HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000)))
        }
    }

    @Test func writesAcceptedNotificationsAsJSONLines() async throws {
        let record = try temporaryRecordFile()
        defer { try? FileManager.default.removeItem(at: record.deletingLastPathComponent()) }
        let path = record.path
        try await SimulatorFixture.run(configure: { $0.recordFile = path }) { f in
            let client = try await f.connect()
            _ = try await client.sendBatch([
                notification(token: hexToken(1), headers: [("apns-topic", SimulatorFixture.topic), ("apns-collapse-id", "a")]),
                notification(token: hexToken(2), body: #"{"aps":{"badge":3},"x":[1,2]}"#),
                notification(token: "zz"),  // rejected: not recorded
            ])
            await client.close()
        }
        let lines = try recordLines(path)
        #expect(lines.count == 2)
        let records = try lines.map { try JSONValue(parsing: String($0)) }
        let byToken = Dictionary(uniqueKeysWithValues: records.map { ($0["token"]?.stringValue ?? "", $0) })
        let one = try #require(byToken[hexToken(1)])
        #expect(one["topic"] == .string(SimulatorFixture.topic))
        #expect(one["pushType"] == .string("alert"))
        #expect(one["priority"] == .int(10))
        #expect(one["expiration"] == .null)
        #expect(one["collapseId"] == .string("a"))
        #expect(NotificationID.isValid(one["apnsId"]?.stringValue ?? ""))
        #expect(NotificationID.isValid(one["uniqueId"]?.stringValue ?? ""))
        #expect(one["payload"] == (try JSONValue(parsing: #"{"aps":{"alert":"hi"}}"#)))
        let two = try #require(byToken[hexToken(2)])
        #expect(two["payload"] == (try JSONValue(parsing: #"{"aps":{"badge":3},"x":[1,2]}"#)))
    }

    /// The record file is written before the answer leaves: whoever holds a 200 finds its notification in the
    /// file (tests read it as soon as a `pushctl` process exits). Before, the simulator flushed the answers to the
    /// socket first and the record lines after, so a client could read the file between the two; and
    /// NIOHTTP2Handler flushes queued answers on its own (acknowledging SETTINGS or PING), so only a handler
    /// every flush passes through keeps the order (``RecordBeforeFlushHandler``).
    @Test func aNotificationIsInTheRecordFileOnceItsAnswerArrives() async throws {
        let record = try temporaryRecordFile()
        defer { try? FileManager.default.removeItem(at: record.deletingLastPathComponent()) }
        let path = record.path
        try await SimulatorFixture.run(configure: { $0.recordFile = path }) { f in
            let client = try await f.connect()
            for i in 1...200 {
                let answers = try await client.sendBatch([notification(token: hexToken(UInt8(i)))])
                #expect(answers.first?.status == 200)
                let lines = try recordLines(path)
                #expect(lines.count == i, "answer \(i) arrived before its record line")
                if lines.count != i { break }
            }
            await client.close()
        }
    }

    @Test func keepsOnlyTheLatestNotificationsInMemoryButCountsAll() async throws {
        try await SimulatorFixture.run(configure: { $0.receivedLimit = 5 }) { f in
            let client = try await f.connect()
            for i in 0..<8 {
                let r = try await client.send(notification(token: hexToken(UInt8(i))))
                #expect(r.status == 200)
            }
            await client.close()
            let received = f.simulator.received
            #expect(received.map(\.request.token.hex) == (3..<8).map { hexToken(UInt8($0)) })
            #expect(f.simulator.counters.accepted == 8)
            f.simulator.resetRecords()
            #expect(f.simulator.received.isEmpty)
            #expect(f.simulator.counters.accepted == 0)
        }
    }

    /// curl 7.88 resets every stream after a body-less response; the connection must survive that.
    @Test func keepsTheConnectionWhenTheClientResetsEveryStream() async throws {
        try await SimulatorFixture.run(.none) { f in
            let client = try await f.connect()
            for _ in 0..<4 {
                let responses = try await client.sendBatch(Array(repeating: notification(), count: 100))
                #expect(responses.allSatisfy { $0.status == 200 })
                for r in responses { client.reset(r.streamID) }
            }
            let last = try await client.send(notification())
            #expect(last.status == 200)
            #expect(try await client.goAways.isEmpty)
            await client.close()
            #expect(f.simulator.counters.connections == 1)
            #expect(f.simulator.counters.accepted == 401)
        }
    }

    @Test func stopClosesOpenConnections() async throws {
        let pki = try SimulatorPKI()
        let simulator = try PushSimulator(
            configuration: .init(
                caPEM: pki.ca.certificatePEM, serverCertificatePEM: pki.server.certificatePEM,
                serverKeyPEM: pki.server.keyPEM, clientAuth: .none))
        let port = try await simulator.start()
        #expect(simulator.port == port)
        let client = try await H2TestClient.connect(port: port, caPEM: pki.ca.certificatePEM)
        try await simulator.stop()
        try await client.waitForClose()
        await #expect(throws: (any Error).self) {
            try await H2TestClient.connect(port: port, caPEM: pki.ca.certificatePEM, timeout: .seconds(2))
        }
    }
}

/// A record file in a new temporary directory (the caller removes the directory).
private func temporaryRecordFile() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent("record.jsonl")
}

/// The JSON lines of a record file.
private func recordLines(_ path: String) throws -> [Substring] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
}
