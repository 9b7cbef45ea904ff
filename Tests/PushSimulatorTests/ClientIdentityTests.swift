@testable import PushSimulator
import PushCore
import Testing

/// Certificate authentication: chain, environment OIDs, subject UID and Apple's topics extension.
@Suite(.timeLimit(.minutes(2)))
struct ClientIdentityTests {
    @Test func rejectsAClientWithoutACertificateDuringTheHandshake() async throws {
        try await SimulatorFixture.run { f in
            await #expect(throws: (any Error).self) {
                let client = try await H2TestClient.connect(port: f.port, caPEM: f.pki.ca.certificatePEM, identity: nil)
                _ = try await client.send(notification())
            }
            #expect(f.simulator.counters.requests == 0)
        }
    }

    @Test func rejectsACertificateFromAnotherCA() async throws {
        try await SimulatorFixture.run { f in
            let stranger = try SimulatorPKI(commonName: "Untrusted CA").client(uid: SimulatorFixture.topic)
            await #expect(throws: (any Error).self) {
                let client = try await f.connect(identity: stranger)
                _ = try await client.send(notification())
            }
            #expect(f.simulator.counters.requests == 0)
        }
    }

    @Test func checksTheCertificateEnvironment() async throws {
        try await SimulatorFixture.run { f in
            let topic = SimulatorFixture.topic
            let cases: [(SimulatorPKI.ClientEnvironment, Int, String?)] = [
                (.development, 200, nil), (.both, 200, nil), (.universal, 200, nil),
                (.production, 403, "BadCertificateEnvironment"), (.none, 403, "BadCertificate"),
            ]
            for (environment, status, reason) in cases {
                let client = try await f.connect(identity: try f.pki.client(uid: topic, environment: environment))
                let r = try await client.send(notification())
                await client.close()
                #expect(r.status == status, "\(environment)")
                #expect(reasonOf(r) == reason, "\(environment)")
            }
        }
        try await SimulatorFixture.run(configure: { $0.environment = .production }) { f in
            let prod = try await f.connect(identity: try f.pki.client(uid: SimulatorFixture.topic, environment: .production))
            let ok = try await prod.send(notification())
            await prod.close()
            let dev = try await f.connect()
            let wrong = try await dev.send(notification())
            await dev.close()
            #expect(ok.status == 200)
            #expect(wrong.status == 403)
            #expect(reasonOf(wrong) == "BadCertificateEnvironment")
        }
    }

    @Test func aSingleTopicCertificateImpliesItsTopic() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect()
            let implied = try await client.send(notification(headers: []))
            let other = try await client.send(notification(headers: [("apns-topic", "com.other.app")]))
            let voip = try await client.send(
                notification(headers: [("apns-topic", SimulatorFixture.topic + ".voip"), ("apns-push-type", "voip")]))
            await client.close()
            #expect(implied.status == 200)
            #expect(f.simulator.received.first?.request.topic == SimulatorFixture.topic)
            #expect(reasonOf(other) == "TopicDisallowed")
            #expect(reasonOf(voip) == "TopicDisallowed")
        }
    }

    @Test func aMultiTopicCertificateNeedsAnExplicitTopic() async throws {
        try await SimulatorFixture.run { f in
            let topic = SimulatorFixture.topic
            let identity = try f.pki.client(uid: topic, environment: .universal, topics: [topic, topic + ".voip"])
            let client = try await f.connect(identity: identity)
            let missing = try await client.send(notification(headers: []))
            let voip = try await client.send(notification(headers: [("apns-topic", topic + ".voip"), ("apns-push-type", "voip")]))
            let app = try await client.send(notification(headers: [("apns-topic", topic)]))
            let other = try await client.send(notification(headers: [("apns-topic", "com.other.app")]))
            await client.close()
            #expect(missing.status == 400)
            #expect(reasonOf(missing) == "MissingTopic")
            #expect(voip.status == 200)
            #expect(app.status == 200)
            #expect(reasonOf(other) == "TopicDisallowed")
        }
    }

    @Test func aCertificateWithoutTopicIsBad() async throws {
        try await SimulatorFixture.run { f in
            let client = try await f.connect(identity: try f.pki.client(uid: nil, environment: .development))
            let r = try await client.send(notification())
            await client.close()
            #expect(r.status == 403)
            #expect(reasonOf(r) == "BadCertificate")
        }
    }

    @Test func parsesTheTopicsExtensionLeniently() {
        let der = SimulatorPKI.topicsExtension(["a.b", "a.b.voip"])
        #expect(ClientIdentity.parseTopics(der) == ["a.b", "a.b.voip"])
        #expect(ClientIdentity.parseTopics([0x30, 0x05, 0x0c, 0x09]) == [])  // truncated: nothing, no crash
        #expect(ClientIdentity.parseTopics([0x04, 0x00]) == [])
        // Apple's real layout interleaves types; unknown element kinds are skipped.
        let mixed: [UInt8] = [0x30, 0x0a, 0x0c, 0x01, 0x78, 0x02, 0x01, 0x05, 0x0c, 0x02, 0x79, 0x7a]
        #expect(ClientIdentity.parseTopics(mixed) == ["x", "yz"])
    }
}
