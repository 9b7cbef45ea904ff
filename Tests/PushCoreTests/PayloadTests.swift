import PushCore
import Testing

@Suite struct PayloadTests {
    func parsed(_ prepared: PreparedNotification) throws -> JSONValue { try JSONValue(parsing: prepared.payload) }

    @Test func readmeAlertExample() throws {
        let p = try Payload(aps: APS(alert: .text("Houston, we have a problem."), sound: .named("default"))).prepare()
        #expect(p.payloadString == #"{"aps":{"alert":"Houston, we have a problem.","sound":"default"}}"#)
        #expect(p.pushType == .alert)
        #expect(p.priority == .immediate)
    }

    @Test func readmeSilentExample() throws {
        let p = try Payload(aps: APS(contentAvailable: true), custom: [("photoTitle", .string("Nebula"))]).prepare()
        #expect(try parsed(p) == JSONValue(parsing: #"{"aps":{"content-available":1},"photoTitle":"Nebula"}"#))
        #expect(p.payloadString == #"{"aps":{"content-available":1},"photoTitle":"Nebula"}"#)
        #expect(p.pushType == .background)
        #expect(p.priority == .conserve)
    }

    @Test func dictionaryAlertAndAllApsKeys() throws {
        let aps = APS(
            alert: Alert(title: "T", subtitle: "S", body: "B", locKey: "K", locArgs: ["a"]), badge: 3,
            sound: .dictionary(name: "siren.aiff", critical: true, volume: 0.5), threadId: "th", category: "cat",
            mutableContent: true, targetContentId: "w", interruptionLevel: .timeSensitive, relevanceScore: 0.25,
            filterCriteria: "work")
        let p = try Payload(aps: aps, custom: [("k", .array([.int(1), .null]))]).prepare()
        let expected = try JSONValue(parsing: """
            {"aps":{"alert":{"title":"T","subtitle":"S","body":"B","loc-key":"K","loc-args":["a"]},"badge":3,
            "sound":{"critical":1,"name":"siren.aiff","volume":0.5},"thread-id":"th","category":"cat",
            "mutable-content":1,"target-content-id":"w","interruption-level":"time-sensitive",
            "relevance-score":0.25,"filter-criteria":"work"},"k":[1,null]}
            """)
        #expect(try parsed(p) == expected)
        #expect(!p.payloadString.contains(" "))  // compact
    }

    @Test func priorityTenOnBackgroundIsAnError() {
        #expect(throws: PayloadError.self) {
            try Payload(aps: APS(contentAvailable: true)).prepare(NotificationOptions(priority: .immediate))
        }
        do {
            _ = try Payload(aps: APS(contentAvailable: true)).prepare(NotificationOptions(priority: .immediate))
        } catch {
            #expect(error.code == .priorityNotAllowed)
            #expect(error.message.contains("priority 10"))
        }
    }

    @Test func explicitPushTypeContradictingPayloadIsAnError() {
        #expect(throws: PayloadError(.pushTypeMismatch, "push type background needs an aps with only content-available: 1 (no alert, sound or badge)")) {
            try Payload(aps: APS(alert: .text("hi"))).prepare(NotificationOptions(pushType: .background))
        }
        #expect(throws: PayloadError.self) {
            try Payload(aps: APS(contentAvailable: true)).prepare(NotificationOptions(pushType: .alert))
        }
    }

    @Test func emptyNotificationNeedsExplicitType() throws {
        #expect(throws: PayloadError.self) { try Payload().prepare() }
        let voip = try Payload(custom: [("call", .string("x"))]).prepare(NotificationOptions(pushType: .voip))
        #expect(voip.pushType == .voip)
        #expect(voip.limit == 5120)
        #expect(voip.topic(for: "com.example.app") == "com.example.app.voip")
        #expect(voip.topic(for: "com.example.app.voip") == "com.example.app.voip")
    }

    @Test func headerValidation() throws {
        let alert = Payload(aps: APS(alert: .text("x")))
        #expect(throws: PayloadError.self) { try alert.prepare(NotificationOptions(collapseId: String(repeating: "c", count: 65))) }
        #expect(try alert.prepare(NotificationOptions(collapseId: String(repeating: "~", count: 64))).collapseId?.count == 64)
        // 64 characters, 148 bytes: refused (what schemathesis found the description allowed).
        let wide = String(repeating: "é", count: 42) + String(repeating: "ü", count: 22)
        #expect(wide.count == 64 && wide.utf8.count > 64)
        #expect(throws: PayloadError(.collapseIdTooLong, "collapse id is \(wide.utf8.count) bytes; at most 64 bytes are allowed")) {
            try alert.prepare(NotificationOptions(collapseId: wide))
        }
        // Printable ASCII only, as the description's pattern says: no control character, nothing above 0x7E.
        for bad in ["a\r\nx-injected: 1", "tab\there", "caf\u{e9}", "\u{7f}"] {
            #expect(throws: PayloadError(.collapseIdNotPrintable, "collapse id must be printable ASCII (space to ~): it is sent as an HTTP header")) {
                try alert.prepare(NotificationOptions(collapseId: bad))
            }
        }
        #expect(throws: PayloadError.self) { try alert.prepare(NotificationOptions(notificationId: "not-a-uuid")) }
        #expect(throws: PayloadError.self) { try Payload(aps: APS(badge: -1)).prepare() }
        #expect(throws: PayloadError.self) { try Payload(aps: APS(alert: .text("x"), relevanceScore: 2)).prepare() }
        #expect(throws: PayloadError.self) { try Payload(aps: APS(alert: .text("x")), custom: [("aps", .null)]).prepare() }
    }

    @Test func requestCarriesHeaders() throws {
        let token = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        let p = try Payload(aps: APS(alert: .text("x"))).prepare(NotificationOptions(expiration: 0, collapseId: "c"))
        let r = p.request(token: token, bundleId: "com.example.app")
        #expect(r.path == "/3/device/" + token.hex)
        #expect(NotificationID.isValid(r.notificationId))
        let names = r.headers.map(\.name)
        #expect(names == ["apns-id", "apns-push-type", "apns-priority", "apns-topic", "apns-expiration", "apns-collapse-id"])
    }

    @Test func rawPayloadsAreValidatedNotRewritten() throws {
        let raw = Array(#" {"aps": {"content-available": 1}, "x": "y"} "#.utf8)
        let p = try PreparedNotification(raw: raw)
        #expect(p.payloadString == #"{"aps": {"content-available": 1}, "x": "y"}"#)
        #expect(p.pushType == .background)
        #expect(throws: PayloadError.self) { try PreparedNotification(raw: Array(#"{"x":1}"#.utf8)) }
        #expect(throws: PayloadError.self) { try PreparedNotification(raw: Array(#"{"aps":1}"#.utf8)) }
        #expect(throws: PayloadError.self) { try PreparedNotification(raw: Array(#"{"aps":{"alert":"x"}"#.utf8)) }
        let big = Array(("{\"aps\":{\"alert\":\"" + String(repeating: "a", count: 5000) + "\"}}").utf8)
        #expect(throws: PayloadError.self) { try PreparedNotification(raw: big) }
    }

    @Test func limitOverrideAndNoTruncation() throws {
        let text = String(repeating: "a", count: 300)
        let p = try Payload(aps: APS(alert: .text(text))).prepare(NotificationOptions(limit: 256))
        #expect(p.payload.count == 256)
        #expect(p.truncated)
        #expect(throws: PayloadError.self) {
            try Payload(aps: APS(alert: .text(text))).prepare(NotificationOptions(limit: 256, allowTruncation: false))
        }
        #expect(throws: PayloadError.self) {
            try Payload(aps: APS(contentAvailable: true), custom: [("d", .string(text))]).prepare(NotificationOptions(limit: 256))
        }
    }
}

@Suite struct DerivedIDTests {
    /// Ids sent before an upgrade must be the ids sent after it (a resumed broadcast resends the same ones):
    /// these values come from the algorithm written out independently (FNV-1a pair, version 4 and variant bits).
    @Test func derivedIdsKeepTheirPublishedValues() throws {
        let a = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        #expect(NotificationID.derived(broadcast: "digest-2026-11-22", token: a) == "b4c344e3-7168-4cae-8ef2-d7756a9aaf38")
        #expect(NotificationID.collapseId(forJob: String(repeating: "x", count: 70)) == "5b5b7e9d-0f6a-4ac4-b929-b3498acf09cf")
        // A broadcast id outside ASCII: its UTF-8 bytes are what is hashed.
        #expect(NotificationID.derived(broadcast: "Ünïcode-bröadcast", token: a) == "996dfa41-c017-40af-b975-dd63da37d017")
    }

    /// The engine derives a broadcast's ids through ``NotificationID/Derivation`` (the broadcast id hashed once): the same
    /// published values, for every token.
    @Test func aBroadcastsDerivationGivesTheDerivedIds() throws {
        let a = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        #expect(NotificationID.Derivation(broadcast: "digest-2026-11-22").id(for: a) == "b4c344e3-7168-4cae-8ef2-d7756a9aaf38")
        #expect(NotificationID.Derivation(broadcast: "Ünïcode-bröadcast").id(for: a) == "996dfa41-c017-40af-b975-dd63da37d017")
        let derivation = NotificationID.Derivation(broadcast: "b-7")
        for i in 0..<50 {
            let token = try DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            #expect(derivation.id(for: token) == NotificationID.derived(broadcast: "b-7", token: token))
        }
    }

    @Test func derivedIdsAreStableUniqueAndValid() throws {
        let a = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        let b = try DeviceToken(parsing: String(repeating: "ab", count: 31) + "ac")
        let id = NotificationID.derived(broadcast: "digest-2026-11-22", token: a)
        #expect(NotificationID.isValid(id))
        #expect(id == NotificationID.derived(broadcast: "digest-2026-11-22", token: a))
        #expect(id != NotificationID.derived(broadcast: "digest-2026-11-22", token: b))
        #expect(id != NotificationID.derived(broadcast: "digest-2026-11-23", token: a))
        var seen = Set<String>()
        for i in 0..<20_000 {
            let digits = String(i, radix: 16)
            let hex = String(repeating: "0", count: 16 - digits.count) + digits
            seen.insert(NotificationID.derived(broadcast: "b", token: try DeviceToken(parsing: hex)))
        }
        #expect(seen.count == 20_000)
    }
}
