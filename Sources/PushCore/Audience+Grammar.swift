/// The filter language's grammar as one regular expression: a clause is accepted exactly when it matches this and
/// parses (``AudienceClause/init(parsing:)`` checks nothing the pattern does not say). `docs/openapi.yaml` describes
/// a clause with the same pattern (OpenAPIContractTests keeps the two equal), so what a client validates against the
/// description is what the server accepts — schemathesis holds the server to that in both directions.
public enum AudienceGrammar {
    static let space = "[ \\t]*"
    static let gap = "[ \\t]+"
    /// A bare value: ASCII letters, digits and `. _ : @ + / -`.
    static let bare = "[A-Za-z0-9._:@+/-]{1,256}"
    /// A quoted value: any characters but `"` and `\`.
    static let quoted = "\"[^\"\\\\]{0,256}\""
    static let value = "(?:\(bare)|\(quoted))"
    /// A prefix: a bare value and `*`.
    static let prefix = "[A-Za-z0-9._:@+/-]{1,256}\\*"
    static let version = "[0-9]{1,9}(?:\\.[0-9]{1,9}){0,5}"
    static let number = "-?[0-9]{1,15}(?:\\.[0-9]{1,15})?"
    static let user = "[A-Za-z0-9._:@+-]{1,128}"
    static let locale = "(?:[A-Za-z]{2,3}|[A-Za-z]{5,8})(?:[-_][A-Za-z0-9]{1,8}){0,3}"
    static let channel = "[A-Za-z0-9._:-]{1,64}"
    static let environment = "(?:development|production)"
    /// Every ``PushService``, from the one list.
    static let service = "(?:" + PushService.allCases.map(\.rawValue).joined(separator: "|") + ")"
    static let comparison = "(?:<=|>=|<|>)"

    static func quotedOrBare(_ p: String) -> String { "(?:\(p)|\"\(p)\")" }
    static func list(_ v: String) -> String { "\(v)(?:\(space),\(space)\(v)){0,99}" }
    static func equalsInPresence(_ field: String, equal: String, member: String, presence: Bool = true) -> [String] {
        var out = ["\(field)\(space)=\(space)\(equal)", "\(field)\(gap)in\(gap)\(list(member))"]
        if presence { out.append("\(field)\(gap)(?:exists|missing)") }
        return out
    }

    /// The pattern of one clause (anchored).
    public static let clausePattern: String = {
        var alternatives: [String] = []
        alternatives += equalsInPresence("(?:installation|timeZone|appVersion|osVersion)", equal: "(?:\(value)|\(prefix))", member: value)
        alternatives.append("(?:appVersion|osVersion)\(space)\(comparison)\(space)\(version)")
        alternatives += equalsInPresence("user", equal: "(?:\(quotedOrBare(user))|\(prefix))", member: quotedOrBare(user))
        alternatives += equalsInPresence("locale", equal: "(?:\(quotedOrBare(locale))|\(prefix))", member: quotedOrBare(locale))
        alternatives += equalsInPresence("channel", equal: quotedOrBare(channel), member: quotedOrBare(channel))
        alternatives += equalsInPresence("environment", equal: quotedOrBare(environment), member: quotedOrBare(environment), presence: false)
        alternatives += equalsInPresence("service", equal: quotedOrBare(service), member: quotedOrBare(service), presence: false)
        let tag = "tags\\.[A-Za-z0-9_-]{1,64}"
        alternatives += equalsInPresence(tag, equal: "(?:\(value)|\(prefix))", member: value)
        alternatives.append("\(tag)\(space)\(comparison)\(space)\(number)")
        return "^\(space)(?:\(alternatives.joined(separator: "|")))\(space)$"
    }()

    nonisolated(unsafe) static let clauseRegex: Regex<AnyRegexOutput> = try! Regex(clausePattern)

    /// True when `text` is a clause of the grammar.
    public static func matches(_ text: String) -> Bool {
        (try? clauseRegex.wholeMatch(in: text)) != nil
    }

    /// A bare `-12.5`-style number (what a tag's number is in a clause).
    static func isNumber(_ text: String) -> Bool {
        var chars = Substring(text)
        if chars.first == "-" { chars = chars.dropFirst() }
        let parts = chars.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.count <= 15 && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// A bare version operand: 1–6 dot-separated numbers of at most 9 digits.
    static func isVersion(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return (1...6).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.count <= 9 && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// A character of a bare value.
    static func isBare(_ c: Character) -> Bool {
        guard c.isASCII, let b = c.asciiValue else { return false }
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: "/"),
             UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
