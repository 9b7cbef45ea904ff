import PushCore

/// A parameter of generated SQL.
enum SQLValue: Equatable {
    case text(String)
    case int(Int64)
    case double(Double)
    case texts([String])
}

/// SQL of one backend's dialect for the filter language (``Audience``) and a local-time wave (``LocalTimeWave``):
/// a condition over `devices d`, with its parameters numbered from a given position. The meaning is
/// ``AudienceClause/matches(_:)``'s; `AudienceConformanceTests` holds both dialects to it. Every value is a bound
/// parameter, never text in the SQL; the SQL's shape depends only on the fields and operators (and `in` lists are
/// one array parameter), so statement caches stay small.
struct AudienceSQL {
    enum Dialect { case sqlite, postgres }

    let dialect: Dialect
    private(set) var values: [SQLValue] = []
    private let firstIndex: Int

    /// A compiler whose first parameter is number `firstIndex` (`?N` on SQLite, `$N` on PostgreSQL).
    init(_ dialect: Dialect, firstIndex: Int) {
        self.dialect = dialect
        self.firstIndex = firstIndex
    }

    /// A new parameter's placeholder.
    mutating func parameter(_ value: SQLValue) -> String {
        values.append(value)
        let n = firstIndex + values.count - 1
        return dialect == .sqlite ? "?\(n)" : "$\(n)"
    }

    /// The condition for every clause of `audience` and `wave` (AND), or `TRUE`.
    mutating func condition(audience: Audience?, wave: LocalTimeWave?) -> String {
        var parts: [String] = []
        for clause in audience?.clauses ?? [] { parts.append("(" + condition(clause) + ")") }
        if let wave { parts.append("(" + condition(wave) + ")") }
        return parts.isEmpty ? "1 = 1" : parts.joined(separator: " AND ")
    }

    private func column(_ field: AudienceField) -> String {
        switch field {
        case .installation: "d.installation"
        case .user: "d.user_id"
        case .timeZone: "d.time_zone"
        case .locale: "d.locale"
        case .appVersion: "d.app_version"
        case .osVersion: "d.os_version"
        case .environment: "d.environment"
        case .service: "d.service"
        case .channel, .tag: "NULL"  // handled apart
        }
    }

    private mutating func condition(_ clause: AudienceClause) -> String {
        switch clause.field {
        case .channel: return channelCondition(clause.test)
        case .tag(let key): return tagCondition(key, clause.test)
        default: break
        }
        let col = column(clause.field)
        switch clause.test {
        case .exists: return "\(col) IS NOT NULL"
        case .missing: return "\(col) IS NULL"
        case .equals(let v): return "\(col) = \(parameter(.text(Self.text(v))))"
        case .prefix(let p): return prefix(col, p)
        case .oneOf(let vs):
            let list = parameter(.texts(vs.map(Self.text)))
            return dialect == .sqlite ? "\(col) IN (SELECT value FROM json_each(\(list)))" : "\(col) = ANY(\(list)::text[])"
        case .compare(let op, let operand):
            guard case .version(let key) = operand, clause.field.isVersion else { return "1 = 0" }
            let keyColumn = clause.field == .appVersion ? "d.app_version_key" : "d.os_version_key"
            return "\(keyColumn) \(op.rawValue) \(parameter(.text(key)))"
        }
    }

    private mutating func prefix(_ expression: String, _ p: String) -> String {
        dialect == .sqlite
            ? "substr(\(expression), 1, \(parameter(.int(Int64(p.count))))) = \(parameter(.text(p)))"
            : "starts_with(\(expression), \(parameter(.text(p))))"
    }

    private mutating func channelCondition(_ test: AudienceTest) -> String {
        let list = "(',' || d.channels || ',')"
        switch test {
        case .exists: return "d.channels <> ''"
        case .missing: return "d.channels = ''"
        case .equals(let v):
            let needle = parameter(.text("," + Self.text(v) + ","))
            return dialect == .sqlite ? "instr(\(list), \(needle)) > 0" : "position(\(needle) in \(list)) > 0"
        case .oneOf(let vs):
            let names = parameter(.texts(vs.map(Self.text)))
            return dialect == .sqlite
                ? "EXISTS (SELECT 1 FROM json_each(\(names)) j WHERE instr(\(list), ',' || j.value || ',') > 0)"
                : "EXISTS (SELECT 1 FROM unnest(\(names)::text[]) AS j(c) WHERE position(',' || j.c || ',' in \(list)) > 0)"
        default: return "1 = 0"
        }
    }

    private mutating func tagCondition(_ key: String, _ test: AudienceTest) -> String {
        switch dialect {
        case .sqlite:
            let path = parameter(.text("$.\"\(key)\""))
            let type = "json_type(d.tags, \(path))"
            let value = "json_extract(d.tags, \(path))"
            func equal(_ v: AudienceValue) -> String {
                switch v {
                case .bool(let b): return "\(type) = '\(b ? "true" : "false")'"
                case .number(let n): return "(\(type) IN ('integer', 'real') AND \(value) = \(parameter(.double(n))))"
                case .string(let s): return "(\(type) = 'text' AND \(value) = \(parameter(.text(s))))"
                case .version(let k): return "(\(type) = 'text' AND \(value) = \(parameter(.text(k))))"
                }
            }
            switch test {
            case .exists: return "\(type) IS NOT NULL"
            case .missing: return "\(type) IS NULL"
            case .equals(let v): return equal(v)
            case .oneOf(let vs): return vs.map(equal).joined(separator: " OR ")
            case .prefix(let p): return "(\(type) = 'text' AND \(prefix(value, p)))"
            case .compare(let op, .number(let n)):
                return "(\(type) IN ('integer', 'real') AND \(value) \(op.rawValue) \(parameter(.double(n))))"
            case .compare: return "1 = 0"
            }
        case .postgres:
            let k = parameter(.text(key))
            let element = "(d.tags -> \(k))"
            let type = "jsonb_typeof(\(element))"
            func equal(_ v: AudienceValue) -> String {
                switch v {
                case .bool(let b): return "\(element) = '\(b ? "true" : "false")'::jsonb"
                case .number(let n):
                    return "(CASE WHEN \(type) = 'number' THEN (d.tags ->> \(k))::float8 = \(parameter(.double(n))) ELSE false END)"
                case .string(let s): return "(\(type) = 'string' AND d.tags ->> \(k) = \(parameter(.text(s))))"
                case .version(let key): return "(\(type) = 'string' AND d.tags ->> \(k) = \(parameter(.text(key))))"
                }
            }
            switch test {
            case .exists: return "\(element) IS NOT NULL"
            case .missing: return "\(element) IS NULL"
            case .equals(let v): return equal(v)
            case .oneOf(let vs): return vs.map(equal).joined(separator: " OR ")
            case .prefix(let p): return "(\(type) = 'string' AND \(prefix("(d.tags ->> \(k))", p)))"
            case .compare(let op, .number(let n)):
                return "(CASE WHEN \(type) = 'number' THEN (d.tags ->> \(k))::float8 \(op.rawValue) \(parameter(.double(n))) ELSE false END)"
            case .compare: return "1 = 0"
            }
        }
    }

    /// A wave takes a device whose zone at the reference instant R is one of the wave's (see ``TimeZoneHistory``):
    /// when the zone has not changed since R, its current zone (the common case: no subquery runs); otherwise the
    /// first history entry that ended after R. No zone is `''`, which the wave lists when it takes unzoned devices.
    private mutating func condition(_ wave: LocalTimeWave) -> String {
        let reference = parameter(.int(wave.referenceMs))
        let zones = parameter(.texts(wave.zones + (wave.includesUnzoned ? [""] : [])))
        switch dialect {
        case .sqlite:
            return """
                (CASE WHEN d.tz_changed_ms IS NULL OR d.tz_changed_ms <= \(reference) THEN coalesce(d.time_zone, '')
                ELSE coalesce((SELECT json_extract(h.value, '$[0]') FROM json_each(d.tz_history) h
                    WHERE json_extract(h.value, '$[1]') > \(reference) ORDER BY CAST(h.key AS INTEGER) LIMIT 1),
                    coalesce(d.time_zone, '')) END) IN (SELECT value FROM json_each(\(zones)))
                """
        case .postgres:
            return """
                (CASE WHEN d.tz_changed_ms IS NULL OR d.tz_changed_ms <= \(reference) THEN coalesce(d.time_zone, '')
                ELSE coalesce((SELECT h.e ->> 0 FROM jsonb_array_elements(d.tz_history) WITH ORDINALITY AS h(e, i)
                    WHERE (h.e ->> 1)::bigint > \(reference) ORDER BY h.i LIMIT 1),
                    coalesce(d.time_zone, '')) END) = ANY(\(zones)::text[])
                """
        }
    }

    private static func text(_ v: AudienceValue) -> String {
        switch v {
        case .string(let s): s
        case .number(let n): AudienceValue.number(n).text
        case .bool(let b): b ? "true" : "false"
        case .version(let k): k
        }
    }
}

extension SQLValue {
    /// The JSON array text of a list (SQLite reads lists through `json_each`).
    var jsonArray: String {
        guard case .texts(let items) = self else { return "[]" }
        return JSONValue.array(items.map { .string($0) }).encodedString
    }
}
