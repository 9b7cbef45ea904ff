/// A clause that does not parse: which one, and why.
public struct AudienceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where it was: `where[0]`, `where[3]`, or `user`.
    public var clause: String
    /// One sentence naming the clause.
    public var message: String

    public init(clause: String, message: String) {
        self.clause = clause
        self.message = message
    }

    public var description: String { message }
}

extension Audience {
    /// Parses an audience: `user` (a user id, from `--user` or `"audience": {"user": …}`) and `where` clauses (from
    /// `--where`, `"audience": {"where": […]}`), all of which must hold.
    ///
    /// One clause:
    ///
    ///     clause  = FIELD "=" VALUE          equal (a bare VALUE ending in * is a prefix: locale = de*)
    ///             | FIELD "in" VALUE,VALUE…  equal to any (channel in a,b: in any of the channels)
    ///             | FIELD ("<"|"<="|">"|">=") VALUE
    ///                                        version order (appVersion, osVersion: 2.10 > 2.9)
    ///                                        or numbers (tags.KEY)
    ///             | FIELD "exists" | FIELD "missing"
    ///     FIELD   = installation | user | timeZone | locale | appVersion | osVersion | channel | environment
    ///             | service | tags.KEY
    ///     VALUE   = a bare word (no spaces, quotes, commas, = < > or *) | "a quoted string" (\" and \\ escape)
    ///
    /// Tag values are typed: a bare number is a number, bare `true`/`false` a boolean, anything else (or quoted) a
    /// string; `tags.beta = true` does not match the string "true". Spaces around operators are optional.
    public static func parse(where texts: [String], user: String? = nil) throws(AudienceError) -> Audience {
        try parse(where: texts, user: user, limit: maximumClauses)
    }

    static func parse(where texts: [String], user: String?, limit: Int) throws(AudienceError) -> Audience {
        var clauses: [AudienceClause] = []
        if let user {
            if let problem = UserAuth.userProblem(user) { throw AudienceError(clause: "user", message: "user: \(problem)") }
            clauses.append(AudienceClause(field: .user, test: .equals(.string(user))))
        }
        for (i, text) in texts.enumerated() {
            let name = "where[\(i)]"
            do {
                clauses.append(try AudienceClause(parsing: text))
            } catch {
                throw AudienceError(clause: name, message: "\(name) '\(text.prefix(120))': \(error.message)")
            }
        }
        guard !clauses.isEmpty else { throw AudienceError(clause: "where", message: "where: an audience needs at least one clause (or a user)") }
        guard texts.count <= limit else {
            throw AudienceError(clause: "where", message: "where: an audience may have at most \(limit) clauses (and a user), got \(texts.count)")
        }
        return Audience(clauses)
    }

    /// Parses stored clause texts (written by ``texts``: the user's clause among them, so one more than the
    /// `where` limit) back; nil when they no longer parse.
    public init?(storedTexts: [String]) {
        guard let audience = try? Audience.parse(where: storedTexts, user: nil, limit: Audience.maximumClauses + 1) else { return nil }
        self = audience
    }
}

/// Why one clause does not parse (wrapped into ``AudienceError`` with its position).
struct ClauseProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension AudienceClause {
    /// Parses one clause (see ``Audience/parse(where:user:)``).
    init(parsing text: String) throws(ClauseProblem) {
        var scanner = ClauseScanner(text)
        scanner.skipSpaces()
        let fieldName = scanner.word()
        guard !fieldName.isEmpty else {
            throw ClauseProblem("expected a field (\(AudienceField.names.joined(separator: ", ")))")
        }
        let field = try Self.field(fieldName)
        scanner.skipSpaces()
        let op = scanner.operatorToken()
        guard let op else {
            throw ClauseProblem("expected an operator after \(fieldName) (=, in, <, <=, >, >=, exists, missing)")
        }
        scanner.skipSpaces()
        let test: AudienceTest
        switch op {
        case "exists", "missing":
            guard field != .environment else { throw ClauseProblem("environment always has a value; use environment = production") }
            guard field != .service else { throw ClauseProblem("service always has a value; use service = webpush") }
            test = op == "exists" ? .exists : .missing
        case "=":
            let (value, quoted) = try scanner.value()
            if !quoted, value.hasSuffix("*") {
                let prefix = String(value.dropLast())
                guard !prefix.isEmpty else { throw ClauseProblem("a prefix needs at least one character before *") }
                guard prefix.unicodeScalars.count <= Audience.maximumValueLength else {
                    throw ClauseProblem("a value may be at most \(Audience.maximumValueLength) characters")
                }
                guard field != .channel, field != .environment, field != .service else {
                    throw ClauseProblem("\(field.name) takes exact values, not prefixes")
                }
                test = .prefix(prefix)
            } else {
                test = .equals(try Self.value(value, quoted: quoted, for: field))
            }
        case "in":
            var values: [AudienceValue] = []
            while true {
                let (value, quoted) = try scanner.value()
                if !quoted, value.hasSuffix("*") { throw ClauseProblem("in takes exact values, not prefixes") }
                values.append(try Self.value(value, quoted: quoted, for: field))
                scanner.skipSpaces()
                guard scanner.take(",") else { break }
                scanner.skipSpaces()
            }
            guard values.count <= Audience.maximumListValues else {
                throw ClauseProblem("in takes at most \(Audience.maximumListValues) values, got \(values.count)")
            }
            test = .oneOf(values)
        default:
            guard let comparison = AudienceComparison(rawValue: op) else { throw ClauseProblem("unknown operator '\(op)'") }
            let (value, quoted) = try scanner.value()
            switch field {
            case .appVersion, .osVersion:
                guard !quoted, AudienceGrammar.isVersion(value), let key = VersionOrder.key(value) else {
                    throw ClauseProblem("'\(value.prefix(64))' is not a version (1-6 numbers of at most 9 digits separated by dots, such as 2.3 or 17.2.1)")
                }
                test = .compare(comparison, .version(key))
            case .tag:
                guard !quoted, AudienceGrammar.isNumber(value), let number = Double(value) else {
                    throw ClauseProblem("\(field.name) \(op) needs a number, not '\(value.prefix(64))'")
                }
                test = .compare(comparison, .number(number))
            default:
                throw ClauseProblem("\(op) compares appVersion and osVersion (version order) or tags (numbers), not \(field.name)")
            }
        }
        scanner.skipSpaces()
        guard scanner.atEnd else { throw ClauseProblem("unexpected '\(scanner.rest.prefix(40))' after the clause") }
        // The grammar's pattern says the rest (what docs/openapi.yaml says a clause is): nothing it refuses passes.
        guard AudienceGrammar.matches(text) else {
            throw ClauseProblem("not a clause of the filter language (see README \"Audiences and local time\")")
        }
        self.init(field: field, test: test)
    }

    private static func field(_ name: String) throws(ClauseProblem) -> AudienceField {
        switch name {
        case "installation": return .installation
        case "user": return .user
        case "timeZone": return .timeZone
        case "locale": return .locale
        case "appVersion": return .appVersion
        case "osVersion": return .osVersion
        case "channel": return .channel
        case "environment": return .environment
        case "service": return .service
        default:
            if name.hasPrefix("tags.") {
                let key = String(name.dropFirst(5))
                do { try InstallationRules.tagKey(key) } catch { throw ClauseProblem(error.message) }
                return .tag(key)
            }
            throw ClauseProblem("unknown field '\(name.prefix(64))' (use \(AudienceField.names.joined(separator: ", ")))")
        }
    }

    /// A value for `field`: typed for tags, checked for fields with a fixed form (environment, user, locale).
    private static func value(_ text: String, quoted: Bool, for field: AudienceField) throws(ClauseProblem) -> AudienceValue {
        guard text.unicodeScalars.count <= Audience.maximumValueLength else {
            throw ClauseProblem("a value may be at most \(Audience.maximumValueLength) characters")
        }
        switch field {
        case .tag:
            if !quoted {
                if text == "true" { return .bool(true) }
                if text == "false" { return .bool(false) }
                if AudienceGrammar.isNumber(text), let d = Double(text) { return .number(d) }
            }
            return .string(text)
        case .environment:
            guard APNsEnvironment(rawValue: text) != nil else { throw ClauseProblem("environment is development or production, not '\(text.prefix(64))'") }
            return .string(text)
        case .service:
            guard PushService(rawValue: text) != nil else {
                throw ClauseProblem("service is \(PushService.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text.prefix(64))'")
            }
            return .string(text)
        case .channel:
            guard ChannelName.problem(text) == nil else { throw ClauseProblem(ChannelName.problem(text) ?? "") }
            return .string(text)
        case .user:
            if let problem = UserAuth.userProblem(text) { throw ClauseProblem(problem) }
            return .string(text)
        case .locale:
            do { return .string(try InstallationRules.locale(text)) } catch { throw ClauseProblem(error.message) }
        default:
            return .string(text)
        }
    }
}

/// The channel-name rule for clauses (the registry's own check is the same: 1…64 of `A-Z a-z 0-9 . _ : -`).
enum ChannelName {
    static func problem(_ name: String) -> String? {
        let ok = !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
        return ok ? nil : "invalid channel name '\(name.prefix(80))': use 1…64 characters of A-Z a-z 0-9 . _ : -"
    }
}

/// Reads one clause left to right.
struct ClauseScanner {
    private let chars: [Character]
    private var i = 0

    init(_ text: String) { chars = Array(text) }

    var atEnd: Bool { i >= chars.count }
    var rest: String { String(chars[min(i, chars.count)...]) }

    mutating func skipSpaces() { while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 } }

    mutating func take(_ c: Character) -> Bool {
        guard i < chars.count, chars[i] == c else { return false }
        i += 1
        return true
    }

    /// A field name: letters, digits, `.`, `_`, `-`.
    mutating func word() -> String {
        let start = i
        while i < chars.count, chars[i].isASCII, chars[i].isLetter || chars[i].isNumber || chars[i] == "." || chars[i] == "_" || chars[i] == "-" {
            i += 1
        }
        return String(chars[start..<i])
    }

    /// `>=`, `<=`, `>`, `<`, `=`, or the words `in`, `exists`, `missing` (followed by a space or the end).
    mutating func operatorToken() -> String? {
        guard i < chars.count else { return nil }
        for symbol in [">=", "<=", ">", "<", "="] {
            let s = Array(symbol)
            if i + s.count <= chars.count, Array(chars[i..<(i + s.count)]) == s {
                i += s.count
                return symbol
            }
        }
        let save = i
        let w = word()
        if ["in", "exists", "missing"].contains(w), i >= chars.count || chars[i] == " " || chars[i] == "\t" { return w }
        i = save
        return nil
    }

    /// A bare word (up to a space or comma) or a double-quoted string; whether it was quoted.
    mutating func value() throws(ClauseProblem) -> (String, Bool) {
        guard i < chars.count else { throw ClauseProblem("expected a value") }
        if chars[i] == "\"" {
            i += 1
            var out = ""
            while i < chars.count {
                let c = chars[i]
                i += 1
                if c == "\"" { return (out, true) }
                if c == "\\" { throw ClauseProblem("a quoted value cannot hold \\ (nor \")") }
                out.append(c)
            }
            throw ClauseProblem("a quoted value is not closed")
        }
        let start = i
        while i < chars.count, chars[i] != " ", chars[i] != "\t", chars[i] != "," {
            let c = chars[i]
            if c != "*" && !AudienceGrammar.isBare(c) {
                throw ClauseProblem("unexpected '\(c)' in a value (quote values with other characters than A-Z a-z 0-9 . _ : @ + / -)")
            }
            if c == "*", i + 1 < chars.count, chars[i + 1] != " ", chars[i + 1] != "\t" {
                throw ClauseProblem("* may only end a prefix (locale = de*)")
            }
            i += 1
        }
        guard i > start else { throw ClauseProblem("expected a value") }
        return (String(chars[start..<i]), false)
    }
}
