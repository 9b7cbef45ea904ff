import PushCore
import Testing

/// `Audience`: the filter language of the API's `"audience"`, the CLI's `--user`/`--where` and the console. Every
/// accepted clause has one canonical text (stored with a job and parsed back); every refused one says why, naming
/// the clause.
@Suite struct AudienceTests {
    /// Accepted clauses and their canonical text.
    @Test(arguments: [
        ("appVersion>=2.3", "appVersion >= 2.3"),
        ("appVersion >= 2.3.0", "appVersion >= 2.3"),
        ("osVersion < 17", "osVersion < 17"),
        ("appVersion <= 2.010", "appVersion <= 2.10"),
        ("appVersion = 2.10-beta", "appVersion = 2.10-beta"),
        ("tags.ratio < 0.000000000000001", "tags.ratio < 0.000000000000001"),
        ("tags.code = 1e5", "tags.code = 1e5"),
        (#"timeZone = "Amérique""#, #"timeZone = "Amérique""#),
        ("locale=de*", "locale = de*"),
        ("locale = de_de", "locale = de-DE"),
        ("locale in de,fr-FR,it", "locale in de,fr-FR,it"),
        ("locale in de, fr", "locale in de,fr"),
        ("timeZone = Europe/*", "timeZone = Europe/*"),
        ("timeZone = America/New_York", "timeZone = America/New_York"),
        ("user = 42", #"user = "42""#),
        ("user = alice@example.com", "user = alice@example.com"),
        ("user exists", "user exists"),
        ("user missing", "user missing"),
        ("installation = inst-1", "installation = inst-1"),
        ("channel = news", "channel = news"),
        ("channel in news,sports", "channel in news,sports"),
        ("channel exists", "channel exists"),
        ("environment = production", "environment = production"),
        ("environment in development,production", "environment in development,production"),
        ("service = webpush", "service = webpush"),
        (#"service = "apns""#, "service = apns"),
        ("service in apns, fcm", "service in apns,fcm"),
        ("tags.plan = pro", "tags.plan = pro"),
        (#"tags.plan = "pro plus""#, #"tags.plan = "pro plus""#),
        ("tags.score >= 10", "tags.score >= 10"),
        ("tags.score < 2.5", "tags.score < 2.5"),
        ("tags.beta = true", "tags.beta = true"),
        (#"tags.code = "3""#, #"tags.code = "3""#),
        ("tags.code = 3", "tags.code = 3"),
        ("tags.plan in pro,team", "tags.plan in pro,team"),
        ("tags.plan = pr*", "tags.plan = pr*"),
        ("tags.plan missing", "tags.plan missing"),
    ]) func acceptsAndCanonicalises(_ text: String, _ canonical: String) throws {
        let audience = try Audience.parse(where: [text])
        #expect(audience.texts == [canonical])
        // The canonical text parses back to the same clause (what a stored job reads).
        #expect(try Audience.parse(where: audience.texts) == audience)
    }

    /// Refused clauses, with what the message says.
    @Test(arguments: [
        ("", "expected a field"),
        ("appVersion", "expected an operator"),
        ("appVersion ~ 2", "expected an operator"),
        ("appVersion != 2", "expected an operator"),
        ("color = red", "unknown field 'color'"),
        ("appVersion >= beta", "'beta' is not a version"),
        ("appVersion <= 2.10-beta", "is not a version"),
        ("appVersion >= 1.2.3.4.5.6.7", "is not a version"),
        (#"appVersion >= "2.3""#, "is not a version"),
        ("tags.n > 1e5", "needs a number"),
        (#"tags.plan = "a\"b""#, "cannot hold"),
        ("timeZone = Amérique", "unexpected 'é'"),
        ("locale = de-DE-a-b-c", "BCP 47"),
        ("locale >= de", "compares appVersion and osVersion"),
        ("user >= 3", "compares appVersion and osVersion"),
        ("tags.score >= high", "needs a number"),
        (#"tags.score >= "10""#, "needs a number"),
        ("tags.a.b = 1", "key 'a.b'"),
        ("locale = d", "BCP 47"),
        ("environment = staging", "development or production"),
        ("environment = prod*", "exact values"),
        ("environment exists", "always has a value"),
        ("service = safari", "service is apns, webpush, fcm, hms, harmonyos, unifiedpush, not 'safari'"),
        ("service = web*", "exact values"),
        ("service missing", "always has a value"),
        ("service >= apns", "compares appVersion and osVersion"),
        ("channel = bad name", "unexpected 'name'"),
        ("channel = news*", "exact values"),
        ("channel = a/b", "invalid channel name"),
        ("user = a b", "unexpected 'b'"),
        ("user = a/b", "user must be 1-128 characters"),
        ("locale in de,fr*", "exact values, not prefixes"),
        ("locale = *", "at least one character before *"),
        ("locale = d*e", "* may only end a prefix"),
        (#"tags.plan = "pro"#, "not closed"),
        ("appVersion = ", "expected a value"),
        ("user exists now", "unexpected 'now'"),
    ]) func refusesWithAMessageNamingTheClause(_ text: String, _ says: String) {
        #expect {
            try Audience.parse(where: ["appVersion >= 1", text])
        } throws: { error in
            guard let e = error as? AudienceError else { return false }
            return e.clause == "where[1]" && e.message.hasPrefix("where[1] '") && e.message.contains(says)
        }
    }

    /// Every clause the table accepts is in the grammar's pattern (what docs/openapi.yaml says a clause is), and so
    /// is its canonical text; stored with a user and the most clauses, an audience parses back.
    @Test func theGrammarsPatternAndTheParserAgree() throws {
        for text in ["appVersion>=2.3", "locale = de*", #"user = "42""#, "channel in news, sports", "tags.n exists", "  user missing  "] {
            #expect(AudienceGrammar.matches(text), "\(text)")
            let canonical = try Audience.parse(where: [text]).texts[0]
            #expect(AudienceGrammar.matches(canonical), "\(canonical)")
        }
        for text in ["environment exists", "locale ~ de", "appVersion >= two", "user = a b", "", "channel = news*"] {
            #expect(!AudienceGrammar.matches(text), "\(text)")
        }
        let full = try Audience.parse(where: (0..<16).map { "tags.t\($0) exists" }, user: "42")
        let targeting = JobTargeting(audience: full)
        #expect(try JobTargeting.parse(stored: targeting.storedText)?.audience == full)
    }

    @Test func aUserIsAClauseAndTheLimitsHold() throws {
        let a = try Audience.parse(where: ["locale = de*"], user: "42")
        #expect(a.user == "42")
        #expect(a.texts.first == #"user = "42""#)
        #expect(throws: AudienceError.self) { try Audience.parse(where: [], user: nil) }
        #expect { try Audience.parse(where: [], user: "a b") } throws: { ($0 as? AudienceError)?.clause == "user" }
        let many = (0..<17).map { "tags.t\($0) exists" }
        #expect { try Audience.parse(where: many) } throws: { ($0 as? AudienceError)?.message.contains("at most 16") == true }
        let list = "locale in " + (0..<101).map { "l\($0)x" }.map { _ in "de" }.joined(separator: ",")
        #expect { try Audience.parse(where: [list]) } throws: { ($0 as? AudienceError)?.message.contains("at most 100") == true }
    }

    @Test func matchingFollowsEachFieldsMeaning() throws {
        func device(_ i: Installation, channels: [String] = []) -> AudienceSubject {
            AudienceSubject(environment: .production, channels: channels, installation: i)
        }
        let d = device(Installation(
            user: "42", timeZone: "Europe/Berlin", locale: "de-DE", appVersion: "2.10.1", osVersion: "17.2",
            tags: ["plan": .string("pro"), "score": .number(12), "beta": .bool(true), "code": .string("3")]), channels: ["news"])
        func matches(_ clause: String) throws -> Bool { try Audience.parse(where: [clause]).matches(d) }
        #expect(try matches("appVersion >= 2.9"))  // version order: 2.10 > 2.9
        #expect(try !matches("appVersion < 2.9"))
        #expect(try matches("appVersion >= 2.10.1"))
        #expect(try !matches("appVersion > 2.10.1"))
        #expect(try matches("locale = de*"))
        #expect(try !matches("locale = de"))
        #expect(try matches("locale in fr,de-DE"))
        #expect(try matches("channel = news"))
        #expect(try !matches("channel = sports"))
        #expect(try matches("environment = production"))
        #expect(try matches("service = apns"))  // the default subject's service
        #expect(try !matches("service = webpush"))
        #expect(try Audience.parse(where: ["service in webpush,fcm"]).matches(
            AudienceSubject(environment: .production, channels: [], installation: Installation(), service: .webpush)))
        #expect(try matches("tags.score > 10"))
        #expect(try !matches("tags.plan > 10"))  // a string tag never compares as a number
        #expect(try matches("tags.beta = true"))
        #expect(try !matches(#"tags.beta = "true""#))
        #expect(try matches(#"tags.code = "3""#))
        #expect(try !matches("tags.code = 3"))
        #expect(try matches("tags.missing missing"))
        #expect(try matches("installation missing"))
        #expect(try !matches("installation exists"))
        let bare = device(Installation())
        #expect(try !Audience.parse(where: ["appVersion >= 0"]).matches(bare))
        #expect(try Audience.parse(where: ["user missing", "channel missing"]).matches(bare))
    }
}
