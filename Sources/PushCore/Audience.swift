import Foundation

/// Which registered devices a send reaches: clauses over the installation fields, all of which must hold (AND).
/// The one filter language of the API (`"audience": {"user": …, "where": […]}`), the CLI (`--user U`,
/// `--where CLAUSE` repeated) and the console. Grammar and meaning: ``Audience/parse(where:user:)`` and README
/// "Audiences and local time". The stores compile it to SQL (one place per backend); ``matches(_:)`` is the same
/// meaning in Swift, which the conformance suite holds both backends to.
public struct Audience: Sendable, Equatable {
    /// The clauses, in the order given.
    public var clauses: [AudienceClause]

    /// An audience of these clauses.
    public init(_ clauses: [AudienceClause]) { self.clauses = clauses }

    /// The most `where` clauses one audience may have (besides its user).
    public static let maximumClauses = 16
    /// The most values of one `in` list.
    public static let maximumListValues = 100
    /// The longest value, in bytes.
    public static let maximumValueLength = 256

    /// The clauses as text, each in canonical form (what is stored with a job, and parsed back).
    public var texts: [String] { clauses.map(\.text) }

    /// The user of a `user = U` clause, if the audience has one (a send to one user: an index lookup).
    public var user: String? {
        for clause in clauses { if clause.field == .user, case .equals(.string(let u)) = clause.test { return u } }
        return nil
    }

    /// The channel of a `channel = C` clause, if any (the scan can run on the channel index).
    public var channel: String? {
        for clause in clauses { if clause.field == .channel, case .equals(.string(let c)) = clause.test { return c } }
        return nil
    }

    /// True when `device` is in the audience.
    public func matches(_ device: AudienceSubject) -> Bool { clauses.allSatisfy { $0.matches(device) } }
}

/// What an audience is evaluated against: one device's stored fields.
public struct AudienceSubject: Sendable, Equatable {
    public var environment: APNsEnvironment
    public var channels: [String]
    public var installation: Installation
    public var service: PushService

    public init(environment: APNsEnvironment, channels: [String], installation: Installation, service: PushService = .apns) {
        self.environment = environment
        self.channels = channels
        self.installation = installation
        self.service = service
    }
}

/// One clause: a field and a test.
public struct AudienceClause: Sendable, Equatable {
    public var field: AudienceField
    public var test: AudienceTest

    public init(field: AudienceField, test: AudienceTest) {
        self.field = field
        self.test = test
    }

    /// The canonical text (`appVersion >= 2.3`, `locale = de*`, `channel in news,sports`, `user exists`).
    public var text: String {
        let name = field.name
        switch test {
        case .equals(let v): return "\(name) = \(v.text)"
        case .prefix(let p): return "\(name) = \(p)*"  // a prefix is always a bare word
        case .oneOf(let vs): return "\(name) in \(vs.map(\.text).joined(separator: ","))"
        case .exists: return "\(name) exists"
        case .missing: return "\(name) missing"
        case .compare(let op, let operand): return "\(name) \(op.rawValue) \(operand.text)"
        }
    }

    /// The clause in Swift (the meaning the SQL of both stores must agree with).
    public func matches(_ device: AudienceSubject) -> Bool {
        let i = device.installation
        switch field {
        case .channel:
            switch test {
            case .equals(.string(let c)): return device.channels.contains(c)
            case .oneOf(let vs): return vs.contains { if case .string(let c) = $0 { device.channels.contains(c) } else { false } }
            case .exists: return !device.channels.isEmpty
            case .missing: return device.channels.isEmpty
            default: return false
            }
        case .environment:
            return AudienceClause.test(test, text: device.environment.rawValue, versionKey: nil)
        case .service:
            return AudienceClause.test(test, text: device.service.rawValue, versionKey: nil)
        case .tag(let key):
            guard let value = i.tags[key] else { return test == .missing }
            switch (test, value) {
            case (.exists, _): return true
            case (.missing, _): return false
            case (.equals(let v), _): return v.matches(value)
            case (.oneOf(let vs), _): return vs.contains { $0.matches(value) }
            case (.prefix(let p), .string(let s)): return s.hasPrefix(p)
            case (.compare(let op, .number(let n)), .number(let d)): return op.holds(d < n ? -1 : d > n ? 1 : 0)
            default: return false
            }
        case .installation: return AudienceClause.test(test, text: i.installation, versionKey: nil)
        case .user: return AudienceClause.test(test, text: i.user, versionKey: nil)
        case .timeZone: return AudienceClause.test(test, text: i.timeZone, versionKey: nil)
        case .locale: return AudienceClause.test(test, text: i.locale, versionKey: nil)
        case .appVersion: return AudienceClause.test(test, text: i.appVersion, versionKey: i.appVersion.flatMap(VersionOrder.key))
        case .osVersion: return AudienceClause.test(test, text: i.osVersion, versionKey: i.osVersion.flatMap(VersionOrder.key))
        }
    }

    private static func test(_ test: AudienceTest, text: String?, versionKey: String?) -> Bool {
        guard let text else { return test == .missing }
        switch test {
        case .exists: return true
        case .missing: return false
        case .equals(let v): return v == .string(text)
        case .oneOf(let vs): return vs.contains { $0 == .string(text) }
        case .prefix(let p): return text.hasPrefix(p)
        case .compare(let op, .version(let key)):
            guard let versionKey else { return false }
            return op.holds(versionKey == key ? 0 : (versionKey.utf8.lexicographicallyPrecedes(key.utf8) ? -1 : 1))
        case .compare: return false
        }
    }
}

/// The fields a clause can test.
public enum AudienceField: Sendable, Equatable, Hashable {
    case installation, user, timeZone, locale, appVersion, osVersion, channel, environment
    /// The device's push service (``PushService``).
    case service
    /// `tags.KEY`.
    case tag(String)

    /// As written in a clause.
    public var name: String {
        switch self {
        case .installation: "installation"
        case .user: "user"
        case .timeZone: "timeZone"
        case .locale: "locale"
        case .appVersion: "appVersion"
        case .osVersion: "osVersion"
        case .channel: "channel"
        case .environment: "environment"
        case .service: "service"
        case .tag(let key): "tags.\(key)"
        }
    }

    /// Fields compared in version order by `<`, `<=`, `>`, `>=`.
    public var isVersion: Bool { self == .appVersion || self == .osVersion }

    /// The field names a clause may start with (tags as `tags.KEY`).
    public static let names = ["installation", "user", "timeZone", "locale", "appVersion", "osVersion", "channel", "environment", "service", "tags.KEY"]
}

/// What a clause checks.
public enum AudienceTest: Sendable, Equatable {
    /// `= V`.
    case equals(AudienceValue)
    /// `= PREFIX*`: a string starting with PREFIX.
    case prefix(String)
    /// `in V1,V2,…`: equal to any.
    case oneOf([AudienceValue])
    /// `exists`: the field has a value (channel: any channel).
    case exists
    /// `missing`: the field has no value.
    case missing
    /// `< <= > >=` against a version (appVersion, osVersion) or a number (tags).
    case compare(AudienceComparison, AudienceValue)
}

/// A comparison operator.
public enum AudienceComparison: String, Sendable, Equatable, CaseIterable {
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    /// Whether the operator holds for an ordering result (-1, 0, 1: left against right).
    public func holds(_ order: Int) -> Bool {
        switch self {
        case .less: order < 0
        case .lessOrEqual: order <= 0
        case .greater: order > 0
        case .greaterOrEqual: order >= 0
        }
    }
}

/// A value in a clause.
public enum AudienceValue: Sendable, Equatable {
    case string(String)
    /// A number (tags: unquoted digits).
    case number(Double)
    /// `true` / `false` (tags, unquoted).
    case bool(Bool)
    /// A version's sort key (``VersionOrder``), with the text it came from.
    case version(String)

    /// As written in canonical clause text.
    public var text: String {
        switch self {
        case .string(let s): return Self.quotedIfNeeded(s)
        case .number(let d): return Self.numberText(d)
        case .bool(let b): return b ? "true" : "false"
        case .version(let key): return Self.versionText(key)
        }
    }

    /// True when a tag value equals this value (typed: `3` matches the number 3, `"3"` the string).
    public func matches(_ tag: TagValue) -> Bool {
        switch (self, tag) {
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        default: return false
        }
    }

    /// A string as a clause writes it: bare when it is a plain word that would not read as a number or a boolean,
    /// else in double quotes (the grammar has no `"` or `\\` in a value, so none needs escaping).
    static func quotedIfNeeded(_ s: String) -> String {
        let plain = !s.isEmpty && s.allSatisfy(AudienceGrammar.isBare) && s != "true" && s != "false" && !AudienceGrammar.isNumber(s)
        return plain ? s : "\"" + s + "\""
    }

    /// A number as the grammar writes it: digits, a point and at most 15 decimals, no exponent.
    static func numberText(_ d: Double) -> String {
        if d.rounded() == d && abs(d) < 9e15 { return String(Int64(d)) }
        var text = String(format: "%.15f", d)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A version key back to the version it orders as (`12.210` → `2.10`).
    static func versionText(_ key: String) -> String {
        key.split(separator: ".").map { String($0.dropFirst()) }.joined(separator: ".")
    }
}
