import PushCore
import Testing

@Suite struct LiveActivityContentTests {
    static let now: Int64 = 1_700_000_000

    /// One row of the rule table: an input (Apple's key names as JSON, or a value built in code), the
    /// request options, and either the expected payload and headers or the expected error.
    struct Case: Sendable, CustomTestStringConvertible {
        enum Input: Sendable {
            case json(String)
            case content(LiveActivityContent)
        }
        enum Expect: Sendable {
            /// The payload (compared as parsed JSON) and the priority; push type and topic are always checked.
            case payload(String, PushPriority)
            /// The error code and a substring of the message.
            case error(PayloadError.Code, String)
        }
        var name: String
        var input: Input
        var priority: PushPriority? = nil
        var limit: Int? = nil
        var expect: Expect
        var testDescription: String { name }

        init(_ name: String, _ json: String, priority: PushPriority? = nil, limit: Int? = nil, _ expect: Expect) {
            self.name = name
            self.input = .json(json)
            self.priority = priority
            self.limit = limit
            self.expect = expect
        }

        init(_ name: String, content: LiveActivityContent, priority: PushPriority? = nil, _ expect: Expect) {
            self.name = name
            self.input = .content(content)
            self.priority = priority
            self.expect = expect
        }

        func prepare() throws(PayloadError) -> PreparedNotification {
            let content: LiveActivityContent
            switch input {
            case .content(let c): content = c
            case .json(let text):
                let json: JSONValue
                do { json = try JSONValue(parsing: text) } catch { fatalError("bad test JSON in \(name): \(error)") }
                content = try LiveActivityContent(json: json)
            }
            return try content.prepare(nowSeconds: LiveActivityContentTests.now, priority: priority, limit: limit)
        }
    }

    static let attrs = #""attributes-type":"MatchAttributes","attributes":{"home":"A","away":"B"}"#
    static let alert = #""alert":{"title":"Kick-off","body":"A vs B"}"#

    static let accepted: [Case] = [
        Case("start with attributes, alert, sound and input-push-token", """
            {"event":"start","content-state":{"score":[0,0]},"timestamp":1700000000,\(attrs),
             "alert":{"title":"Kick-off","body":"A vs B","sound":"chime.aiff"},"input-push-token":1}
            """,
            .payload("""
            {"aps":{"alert":{"title":"Kick-off","body":"A vs B","sound":"chime.aiff"},"content-state":{"score":[0,0]},
             "timestamp":1700000000,"event":"start","attributes-type":"MatchAttributes",
             "attributes":{"home":"A","away":"B"},"input-push-token":1}}
            """, .immediate)),
        Case("start as in Apple's example: loc-key title and body, input-push-channel, stale-date, relevance 100", """
            {"event":"start","content-state":{"hp":100},"timestamp":1234,"attributes-type":"AdventureAttributes",
             "attributes":{"hero":"Power Panda"},"stale-date":1700003600,"relevance-score":100,
             "alert":{"title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]},
                      "body":{"loc-key":"%@ found a sword!","loc-args":["Power Panda"]},"sound":"chime.aiff"},
             "input-push-channel":"dHN0LXNyY2gtY2hubA=="}
            """,
            .payload("""
            {"aps":{"alert":{"title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]},
                             "body":{"loc-key":"%@ found a sword!","loc-args":["Power Panda"]},"sound":"chime.aiff"},
             "relevance-score":100,"stale-date":1700003600,"content-state":{"hp":100},"timestamp":1234,"event":"start",
             "attributes-type":"AdventureAttributes","attributes":{"hero":"Power Panda"},
             "input-push-channel":"dHN0LXNyY2gtY2hubA=="}}
            """, .immediate)),
        Case("start with flat loc keys and a qualified type name", """
            {"event":"start","content-state":{},"attributes-type":"Sports.Match_2","attributes":{},
             "alert":{"title-loc-key":"T","title-loc-args":["x"],"loc-key":"B"}}
            """,
            .payload("""
            {"aps":{"alert":{"title":{"loc-key":"T","loc-args":["x"]},"body":{"loc-key":"B"}},"content-state":{},
             "timestamp":1700000000,"event":"start","attributes-type":"Sports.Match_2","attributes":{}}}
            """, .immediate)),
        Case("update at priority 5 with stale-date and relevance-score", """
            {"event":"update","content-state":{"score":[1,0]},"timestamp":1700000100,"stale-date":1700003600,"relevance-score":50}
            """, priority: .conserve,
            .payload("""
            {"aps":{"relevance-score":50,"stale-date":1700003600,"content-state":{"score":[1,0]},"timestamp":1700000100,"event":"update"}}
            """, .conserve)),
        Case("timestamp defaults to nowSeconds", #"{"event":"update","content-state":{"s":1}}"#,
            .payload(#"{"aps":{"content-state":{"s":1},"timestamp":1700000000,"event":"update"}}"#, .immediate)),
        Case("update with an alert (title and body) and a top-level sound, which goes into the alert", """
            {"event":"update","content-state":{"s":1},"alert":{"title":"Goal","body":"1-0"},"sound":"default"}
            """,
            .payload("""
            {"aps":{"alert":{"title":"Goal","body":"1-0","sound":"default"},"content-state":{"s":1},"timestamp":1700000000,"event":"update"}}
            """, .immediate)),
        Case("end with dismissal-date (in the past: dismiss at once)", """
            {"event":"end","content-state":{"score":[2,1]},"dismissal-date":1663177260}
            """,
            .payload("""
            {"aps":{"content-state":{"score":[2,1]},"timestamp":1700000000,"event":"end","dismissal-date":1663177260}}
            """, .immediate)),
        Case("end with the largest epoch seconds the description allows", #"{"event":"end","timestamp":5,"dismissal-date":99999999999}"#,
            .payload(#"{"aps":{"timestamp":5,"event":"end","dismissal-date":99999999999}}"#, .immediate)),
        Case("end without content-state (Apple recommends the final state, ActivityKit does not require it)",
            #"{"event":"end","timestamp":5}"#,
            .payload(#"{"aps":{"timestamp":5,"event":"end"}}"#, .immediate)),
        Case("stale-date before timestamp is allowed (no Apple rule)",
            #"{"event":"update","content-state":{},"timestamp":100,"stale-date":50}"#,
            .payload(#"{"aps":{"stale-date":50,"content-state":{},"timestamp":100,"event":"update"}}"#, .immediate)),
        Case("negative and fractional relevance-score are allowed (Apple: any Double for Live Activities)",
            #"{"event":"update","content-state":{},"relevance-score":-2.5}"#,
            .payload(#"{"aps":{"relevance-score":-2.5,"content-state":{},"timestamp":1700000000,"event":"update"}}"#, .immediate)),
        Case("null means absent", #"{"event":"update","content-state":{},"stale-date":null,"alert":null}"#,
            .payload(#"{"aps":{"content-state":{},"timestamp":1700000000,"event":"update"}}"#, .immediate)),
        Case("input-push-token 0 leaves the key out", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"input-push-token":0}"#,
            .payload(#"{"aps":{"alert":{"title":"Kick-off","body":"A vs B"},"content-state":{},"timestamp":1700000000,"event":"start",\#(attrs)}}"#, .immediate)),
        Case("custom top-level keys follow aps",
            content: LiveActivityContent(event: .update, contentState: .object([]), timestamp: 7, custom: [("match", .string("m1"))]),
            .payload(#"{"aps":{"content-state":{},"timestamp":7,"event":"update"},"match":"m1"}"#, .immediate)),
    ]

    static func invalid(_ key: String) -> PayloadError.Code { .invalidField(key) }

    static let rejected: [Case] = [
        // Parsing.
        Case("not an object", #"[1]"#, .error(.badAps, "must be a JSON object")),
        Case("unknown key", #"{"event":"update","content-state":{},"contentState":{}}"#,
            .error(invalid("contentState"), #"unknown Live Activity key "contentState""#)),
        Case("missing event", #"{"content-state":{}}"#, .error(invalid("aps.event"), "aps.event is required")),
        Case("unknown event", #"{"event":"stop","content-state":{}}"#, .error(invalid("aps.event"), #"must be start, update or end (got "stop")"#)),
        Case("timestamp not an integer", #"{"event":"update","content-state":{},"timestamp":"now"}"#,
            .error(invalid("aps.timestamp"), "aps.timestamp must be an integer number of epoch seconds")),
        Case("stale-date fractional", #"{"event":"update","content-state":{},"stale-date":1.5}"#,
            .error(invalid("aps.stale-date"), "aps.stale-date must be an integer")),
        Case("relevance-score not a number", #"{"event":"update","content-state":{},"relevance-score":"high"}"#,
            .error(invalid("aps.relevance-score"), "aps.relevance-score must be a number")),
        Case("attributes-type not a string", #"{"event":"start","content-state":{},"attributes-type":1}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type must be a string")),
        Case("input-push-token not 1", #"{"event":"start","content-state":{},"input-push-token":2}"#,
            .error(invalid("aps.input-push-token"), "aps.input-push-token must be 1")),
        Case("alert with an unknown key", #"{"event":"update","content-state":{},"alert":{"title":"t","body":"b","subtitle":"s"}}"#,
            .error(invalid("aps.alert.subtitle"), #"unknown key "subtitle" in aps.alert"#)),
        Case("alert not an object", #"{"event":"update","content-state":{},"alert":3}"#,
            .error(invalid("aps.alert"), "aps.alert must be an object with title and body")),
        Case("alert title of the wrong type", #"{"event":"update","content-state":{},"alert":{"title":1,"body":"b"}}"#,
            .error(invalid("aps.alert.title"), #"must be text or {"loc-key", "loc-args"}"#)),
        Case("sound given twice", #"{"event":"update","content-state":{},"alert":{"title":"t","body":"b","sound":"a"},"sound":"b"}"#,
            .error(invalid("aps.alert.sound"), "give the sound once")),
        // Keys on the wrong event.
        Case("attributes-type on update", #"{"event":"update","content-state":{},"attributes-type":"A"}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type is only for start events (this is an update event)")),
        Case("attributes on end", #"{"event":"end","attributes":{}}"#,
            .error(invalid("aps.attributes"), "aps.attributes is only for start events (this is an end event)")),
        Case("input-push-token on update", #"{"event":"update","content-state":{},"input-push-token":1}"#,
            .error(invalid("aps.input-push-token"), "aps.input-push-token is only for start events")),
        Case("input-push-channel on end", #"{"event":"end","input-push-channel":"dHN0"}"#,
            .error(invalid("aps.input-push-channel"), "aps.input-push-channel is only for start events")),
        Case("dismissal-date on update", #"{"event":"update","content-state":{},"dismissal-date":1}"#,
            .error(invalid("aps.dismissal-date"), "aps.dismissal-date is only for end events (this is an update event)")),
        Case("dismissal-date on start", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"dismissal-date":1}"#,
            .error(invalid("aps.dismissal-date"), "aps.dismissal-date is only for end events (this is a start event)")),
        // content-state.
        Case("update without content-state", #"{"event":"update"}"#,
            .error(invalid("aps.content-state"), "aps.content-state is required for update events")),
        Case("start without content-state", #"{"event":"start",\#(attrs),\#(alert)}"#,
            .error(invalid("aps.content-state"), "aps.content-state is required for start events")),
        Case("content-state not an object", #"{"event":"update","content-state":[1,2]}"#,
            .error(invalid("aps.content-state"), "aps.content-state must be a JSON object")),
        Case("end with content-state a string", #"{"event":"end","content-state":"done"}"#,
            .error(invalid("aps.content-state"), "aps.content-state must be a JSON object")),
        // Start requirements.
        Case("start without attributes-type", #"{"event":"start","content-state":{},"attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type is required for start events")),
        Case("attributes-type with a space", #"{"event":"start","content-state":{},"attributes-type":"Match Attributes","attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type must be a Swift type name")),
        Case("attributes-type starting with a digit", #"{"event":"start","content-state":{},"attributes-type":"1Match","attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type must be a Swift type name")),
        Case("attributes-type with an empty part", #"{"event":"start","content-state":{},"attributes-type":"A..B","attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type must be a Swift type name")),
        Case("attributes-type empty", #"{"event":"start","content-state":{},"attributes-type":"","attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "aps.attributes-type must be a Swift type name")),
        Case("attributes-type over 128 bytes",
            #"{"event":"start","content-state":{},"attributes-type":"\#(String(repeating: "A", count: 129))","attributes":{},\#(alert)}"#,
            .error(invalid("aps.attributes-type"), "at most 128 bytes")),
        Case("start without attributes", #"{"event":"start","content-state":{},"attributes-type":"A",\#(alert)}"#,
            .error(invalid("aps.attributes"), "aps.attributes is required for start events")),
        Case("attributes not an object", #"{"event":"start","content-state":{},"attributes-type":"A","attributes":"x",\#(alert)}"#,
            .error(invalid("aps.attributes"), "aps.attributes must be a JSON object")),
        Case("start without alert", #"{"event":"start","content-state":{},\#(attrs)}"#,
            .error(invalid("aps.alert"), "aps.alert is required for start events")),
        // Alert shape.
        Case("plain-string alert", #"{"event":"update","content-state":{},"alert":"Goal!"}"#,
            .error(invalid("aps.alert"), "aps.alert must be a dictionary with title and body")),
        Case("alert without body", #"{"event":"update","content-state":{},"alert":{"title":"Goal"}}"#,
            .error(invalid("aps.alert.body"), "aps.alert.body is required")),
        Case("alert without title", #"{"event":"update","content-state":{},"alert":{"body":"1-0"}}"#,
            .error(invalid("aps.alert.title"), "aps.alert.title is required")),
        Case("alert title text and title-loc-key", #"{"event":"update","content-state":{},"alert":{"title":"t","title-loc-key":"T","body":"b"}}"#,
            .error(invalid("aps.alert.title"), "give the text or a title-loc-key, not both")),
        Case("loc-args without loc-key", #"{"event":"update","content-state":{},"alert":{"title":"t","body":"b","loc-args":["x"]}}"#,
            .error(invalid("aps.alert.body"), "loc-args need a loc-key")),
        Case("subtitle built in code",
            content: LiveActivityContent(event: .update, contentState: .object([]), alert: Alert(title: "t", subtitle: "s", body: "b")),
            .error(invalid("aps.alert.subtitle"), "aps.alert.subtitle is not part of a Live Activity alert")),
        Case("sound without alert", #"{"event":"update","content-state":{},"sound":"default"}"#,
            .error(invalid("aps.alert.sound"), "aps.alert.sound needs an alert")),
        Case("critical sound volume above 1", #"{"event":"update","content-state":{},"alert":{"title":"t","body":"b","sound":{"critical":1,"name":"a","volume":2}}}"#,
            .error(invalid("aps.alert.sound.volume"), "volume must be between 0 and 1")),
        // Update routes.
        Case("input-push-token with input-push-channel", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"input-push-token":1,"input-push-channel":"dHN0"}"#,
            .error(invalid("aps.input-push-channel"), "aps.input-push-token and aps.input-push-channel cannot be combined")),
        Case("input-push-channel empty", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"input-push-channel":""}"#,
            .error(invalid("aps.input-push-channel"), "must be a channel id as APNs returned it")),
        Case("input-push-channel not base64", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"input-push-channel":"my channel"}"#,
            .error(invalid("aps.input-push-channel"), "non-empty base64 text")),
        Case("input-push-channel badly padded", #"{"event":"start","content-state":{},\#(attrs),\#(alert),"input-push-channel":"dHN0L"}"#,
            .error(invalid("aps.input-push-channel"), "non-empty base64 text")),
        // Numbers.
        Case("relevance-score NaN", content: LiveActivityContent(event: .update, contentState: .object([]), relevanceScore: .nan),
            .error(invalid("aps.relevance-score"), "aps.relevance-score must be a finite number")),
        Case("relevance-score infinite", content: LiveActivityContent(event: .update, contentState: .object([]), relevanceScore: .infinity),
            .error(invalid("aps.relevance-score"), "aps.relevance-score must be a finite number")),
        Case("negative timestamp", #"{"event":"update","content-state":{},"timestamp":-1}"#,
            .error(invalid("aps.timestamp"), "aps.timestamp must be epoch seconds from 0 to 99999999999 (got -1)")),
        Case("negative stale-date", #"{"event":"update","content-state":{},"stale-date":-5}"#,
            .error(invalid("aps.stale-date"), "aps.stale-date must be epoch seconds from 0 to 99999999999")),
        Case("negative dismissal-date", #"{"event":"end","dismissal-date":-5}"#,
            .error(invalid("aps.dismissal-date"), "aps.dismissal-date must be epoch seconds from 0 to 99999999999 (got -5)")),
        // docs/openapi.yaml's maximum (found by schemathesis: the server accepted 100000000000).
        Case("dismissal-date of 12 digits", #"{"event":"end","dismissal-date":100000000000}"#,
            .error(invalid("aps.dismissal-date"), "aps.dismissal-date must be epoch seconds from 0 to 99999999999 (got 100000000000)")),
        Case("stale-date of 12 digits", #"{"event":"update","content-state":{},"stale-date":100000000000}"#,
            .error(invalid("aps.stale-date"), "from 0 to 99999999999")),
        Case("timestamp of 12 digits", #"{"event":"update","content-state":{},"timestamp":100000000000}"#,
            .error(invalid("aps.timestamp"), "from 0 to 99999999999")),
        // Headers and reserved keys.
        Case("priority 1", #"{"event":"update","content-state":{}}"#, priority: .low,
            .error(.priorityNotAllowed, "priority 1 is not allowed for Live Activity pushes")),
        Case("custom key aps", content: LiveActivityContent(event: .update, contentState: .object([]), custom: [("aps", .null)]),
            .error(.badAps, "custom key 'aps' is reserved")),
        Case("over a lower limit", #"{"event":"update","content-state":{"text":"\#(String(repeating: "x", count: 300))"}}"#, limit: 256,
            .error(.tooLarge(size: 377, limit: 256), "payload is 377 bytes; the limit is 256 bytes (Live Activity payloads are never truncated)")),
    ]

    @Test(arguments: accepted)
    func accepts(_ row: Case) throws {
        guard case .payload(let text, let priority) = row.expect else { Issue.record("not a payload row"); return }
        let prepared = try row.prepare()
        #expect(try JSONValue(parsing: prepared.payload) == JSONValue(parsing: text))
        #expect(prepared.pushType == .liveactivity)
        #expect(prepared.priority == priority)
        #expect(prepared.topic(for: "com.example.app") == "com.example.app.push-type.liveactivity")
        #expect(prepared.limit == 4096)
        #expect(!prepared.truncated)
    }

    @Test(arguments: rejected)
    func rejects(_ row: Case) {
        guard case .error(let code, let fragment) = row.expect else { Issue.record("not an error row"); return }
        do {
            let prepared = try row.prepare()
            Issue.record("accepted: \(prepared.payloadString)")
        } catch {
            #expect(error.code == code)
            #expect(error.message.contains(fragment), "message: \(error.message)")
        }
    }

    @Test func everyKeyParses() throws {
        let json = try JSONValue(parsing: """
            {"event":"start","content-state":{"a":1},"timestamp":10,"stale-date":20,"dismissal-date":30,
             "relevance-score":0.5,"attributes-type":"T","attributes":{"b":2},
             "alert":{"title":"t","body":{"loc-key":"K","loc-args":["x"]}},"sound":{"critical":1,"name":"s","volume":0.5},
             "input-push-token":true,"input-push-channel":"dHN0"}
            """)
        let expected = LiveActivityContent(
            event: .start, contentState: .object([("a", .int(1))]), timestamp: 10, staleDate: 20, dismissalDate: 30,
            relevanceScore: 0.5, attributesType: "T", attributes: .object([("b", .int(2))]),
            alert: Alert(title: "t", locKey: "K", locArgs: ["x"]), sound: .dictionary(name: "s", critical: true, volume: 0.5),
            inputPushToken: true, inputPushChannel: "dHN0")
        #expect(try LiveActivityContent(json: json) == expected)
        #expect(try LiveActivityContent(json: JSONValue(parsing: #"{"event":"end"}"#)) == LiveActivityContent(event: .end))
        #expect(LiveActivityEvent.allCases.map(\.rawValue) == ["start", "update", "end"])
    }

    /// A payload of exactly 4096 bytes is sent; one byte more is an error naming both numbers.
    @Test func fourKilobyteLimit() throws {
        func content(_ padding: Int) -> LiveActivityContent {
            LiveActivityContent(event: .update, contentState: .object([("text", .string(String(repeating: "x", count: padding)))]))
        }
        let base = try content(0).prepare(nowSeconds: Self.now).payload.count
        let exact = try content(4096 - base).prepare(nowSeconds: Self.now)
        #expect(exact.payload.count == 4096)
        #expect(exact.limit == 4096)
        #expect(throws: PayloadError(.tooLarge(size: 4097, limit: 4096),
                                     "payload is 4097 bytes; the limit is 4096 bytes (Live Activity payloads are never truncated)")) {
            try content(4097 - base).prepare(nowSeconds: Self.now)
        }
        // A higher `limit` does not raise Apple's.
        #expect(try content(4096 - base).prepare(nowSeconds: Self.now, limit: 10_000).limit == 4096)
    }

    @Test func headersCarryThroughToTheRequest() throws {
        let prepared = try LiveActivityContent(event: .update, contentState: .object([]))
            .prepare(nowSeconds: Self.now, priority: .conserve, expiration: 1_700_003_600, collapseId: "match-1",
                     notificationId: "123e4567-e89b-12d3-a456-4266554400a0")
        #expect(prepared.expiration == 1_700_003_600)
        #expect(prepared.collapseId == "match-1")
        #expect(prepared.notificationId == "123e4567-e89b-12d3-a456-4266554400a0")
        let token = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        let request = prepared.request(token: token, bundleId: "com.example.app")
        let headers = Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, $0.value) })
        #expect(headers["apns-push-type"] == "liveactivity")
        #expect(headers["apns-priority"] == "5")
        #expect(headers["apns-topic"] == "com.example.app.push-type.liveactivity")
        #expect(prepared.topic(for: "com.example.app.push-type.liveactivity") == "com.example.app.push-type.liveactivity")
        #expect(throws: PayloadError.self) {
            try LiveActivityContent(event: .update, contentState: .object([])).prepare(nowSeconds: Self.now, notificationId: "nope")
        }
        #expect(throws: PayloadError.self) {
            try LiveActivityContent(event: .update, contentState: .object([])).prepare(nowSeconds: -1)
        }
    }
}
