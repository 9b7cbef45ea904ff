import PushSimulator
import PushCore
import Testing

/// Scripted device state: unregistered, bad, other-environment, throttled, failing and topic-bound tokens.
@Suite(.timeLimit(.minutes(2)))
struct DeviceBehaviourTests {
    @Test func eachDeviceStateGetsApplesAnswer() async throws {
        let now: Int64 = 1_750_000_000_123
        try await SimulatorFixture.run(.none, configure: { $0.clock = { now } }) { f in
            let t = { (i: UInt8) in try! DeviceToken(parsing: hexToken(i)) }
            f.simulator.unregister(t(1), timestampMs: 1_700_000_000_000)
            f.simulator.unregister(t(2))
            f.simulator.setDevice(t(3), .bad)
            f.simulator.setDevice(t(4), .otherEnvironment)
            f.simulator.setDevice(t(5), .tooManyRequests)
            f.simulator.setDevice(t(6), .internalServerError)
            f.simulator.setDevice(t(7), .topic("com.other.app"))
            f.simulator.setDevice(t(8), .topic(SimulatorFixture.topic))
            let client = try await f.connect()
            let r = try await client.sendBatch((1...9).map { notification(token: hexToken(UInt8($0))) })
            let voip = try await client.send(
                notification(token: hexToken(8), headers: [("apns-topic", SimulatorFixture.topic + ".voip"), ("apns-push-type", "voip")]))
            await client.close()
            let body = { (i: Int) in try JSONValue(parsing: r[i].body) }
            #expect(r[0].status == 410)
            #expect(try body(0) == JSONValue(parsing: #"{"reason":"Unregistered","timestamp":1700000000000}"#))
            #expect(r[1].status == 410)
            #expect(try body(1) == JSONValue(parsing: #"{"reason":"Unregistered","timestamp":1750000000123}"#))
            #expect(r[2].status == 400 && reasonOf(r[2]) == "BadDeviceToken")
            #expect(r[3].status == 400 && reasonOf(r[3]) == "BadDeviceToken")
            #expect(r[4].status == 429 && reasonOf(r[4]) == "TooManyRequests")
            #expect(r[5].status == 500 && reasonOf(r[5]) == "InternalServerError")
            #expect(r[6].status == 400 && reasonOf(r[6]) == "DeviceTokenNotForTopic")
            #expect(r[7].status == 200)
            #expect(r[8].status == 200)
            #expect(voip.status == 200)
            #expect(f.simulator.counters.byStatus == [410: 2, 400: 3, 429: 1, 500: 1, 200: 3])

            f.simulator.setDevice(t(1), nil)
            f.simulator.replaceDevices([:])
            #expect(f.simulator.devices.isEmpty)
            let again = try await f.connect()
            let healed = try await again.send(notification(token: hexToken(1)))
            await again.close()
            #expect(healed.status == 200)
        }
    }

    @Test func parsesADevicesFile() throws {
        let text = """
            {"devices": [
              {"token": "\(hexToken(1))", "state": "unregistered", "timestamp": 1700000000000},
              {"token": "\(hexToken(2).uppercased())", "state": "unregistered"},
              {"token": "\(hexToken(3))", "state": "bad"},
              {"token": "\(hexToken(4))", "state": "otherEnvironment"},
              {"token": "\(hexToken(5))", "state": "tooManyRequests"},
              {"token": "\(hexToken(6))", "state": "internalServerError"},
              {"token": "\(hexToken(7))", "state": "topic", "topic": "com.example.app"},
              {"token": "\(hexToken(8))", "state": "answer", "status": 410, "reason": "TokenInactive", "timestamp": 5},
              {"token": "\(hexToken(9))", "state": "answer", "status": 400, "reason": "BadTopic"}
            ]}
            """
        let devices = try DeviceBehaviourFile.parse(Array(text.utf8))
        let t = { (i: UInt8) in try! DeviceToken(parsing: hexToken(i)) }
        #expect(devices == [
            t(1): .unregistered(timestampMs: 1_700_000_000_000), t(2): .unregistered(timestampMs: nil), t(3): .bad,
            t(4): .otherEnvironment, t(5): .tooManyRequests, t(6): .internalServerError, t(7): .topic("com.example.app"),
            t(8): .answer(status: 410, reason: "TokenInactive", timestampMs: 5),
            t(9): .answer(status: 400, reason: "BadTopic", timestampMs: nil),
        ])
        #expect(try DeviceBehaviourFile.parse(Array("[]".utf8)).isEmpty)
    }

    @Test func rejectsAMalformedDevicesFile() {
        for bad in [
            "{", #"{"x":1}"#, #"[{"state":"bad"}]"#, #"[{"token":"zz","state":"bad"}]"#,
            #"[{"token":"\#(hexToken())","state":"sleepy"}]"#, #"[{"token":"\#(hexToken())","state":"topic"}]"#,
            #"[{"token":"\#(hexToken())","state":"unregistered","timestamp":"yesterday"}]"#,
            // An answer needs an error status and a reason: the simulator does not answer 200 with a reason.
            #"[{"token":"\#(hexToken())","state":"answer","status":200,"reason":"X"}]"#,
            #"[{"token":"\#(hexToken())","state":"answer","status":410}]"#,
            #"[{"token":"\#(hexToken())","state":"answer","reason":"X"}]"#,
        ] {
            #expect(throws: SimulatorError.self, "\(bad)") { try DeviceBehaviourFile.parse(Array(bad.utf8)) }
        }
    }
}
