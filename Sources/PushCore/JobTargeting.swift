/// What a job stores beyond its target and payload: the audience its devices must match, the payload per locale
/// (per-locale alert text), and — for one wave of a local-time job — which devices the wave takes. Stored with the
/// job as one JSON column, so a resumed job, a worker on another host and a retry see exactly what was asked.
public struct JobTargeting: Sendable, Equatable {
    /// Only devices matching it (nil: the job's channel/environment/all as before).
    public var audience: Audience?
    /// Payloads per locale key (`de`, `pt-BR`), each built and size-checked when the job was made; devices whose
    /// locale has no variant get the job's own payload (the `default` text). See ``LocaleChoice``.
    public var variants: [String: [UInt8]]
    /// For a wave of a local-time job: the devices it takes (see ``LocalTimeWave``).
    public var wave: LocalTimeWave?

    /// Creates one.
    public init(audience: Audience? = nil, variants: [String: [UInt8]] = [:], wave: LocalTimeWave? = nil) {
        self.audience = audience
        self.variants = variants
        self.wave = wave
    }

    /// True when it changes nothing (stored as NULL).
    public var isEmpty: Bool { audience == nil && variants.isEmpty && wave == nil }

    /// The payload for a device of locale `locale`: the variant its locale picks, else `fallback`.
    public func payload(forLocale locale: String?, fallback: [UInt8]) -> [UInt8] {
        guard !variants.isEmpty, let key = LocaleChoice.pick(locale, among: variants.keys) else { return fallback }
        return variants[key] ?? fallback
    }

    /// The stored form.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = []
        if let audience { fields.append(("audience", .array(audience.texts.map { .string($0) }))) }
        if !variants.isEmpty {
            fields.append(("variants", .object(variants.sorted { $0.key < $1.key }.map {
                ($0.key, .string(String(decoding: $0.value, as: UTF8.self)))
            })))
        }
        if let wave { fields.append(("wave", wave.json)) }
        return .object(fields)
    }

    /// Reads the stored form; nil for NULL. Throws when it cannot be read (a damaged row or a newer build's).
    public static func parse(stored text: String?) throws(JobTargetingError) -> JobTargeting? {
        guard let text, !text.isEmpty else { return nil }
        guard let json = try? JSONValue(parsing: text), json.objectPairs != nil else {
            throw JobTargetingError(message: "stored targeting is not a JSON object")
        }
        var out = JobTargeting()
        if let clauses = json["audience"] {
            guard let items = clauses.arrayValue else { throw JobTargetingError(message: "stored audience is not an array") }
            let texts = items.compactMap(\.stringValue)
            guard let audience = Audience(storedTexts: texts) else {
                throw JobTargetingError(message: "stored audience \(texts) does not parse")
            }
            out.audience = audience
        }
        if let variants = json["variants"]?.objectPairs {
            for (key, value) in variants {
                guard let s = value.stringValue else { throw JobTargetingError(message: "stored variant \(key) is not text") }
                out.variants[key] = Array(s.utf8)
            }
        }
        if let wave = json["wave"] {
            guard let parsed = LocalTimeWave(json: wave) else { throw JobTargetingError(message: "stored wave is unreadable") }
            out.wave = parsed
        }
        return out
    }

    /// The stored text (nil when empty).
    public var storedText: String? { isEmpty ? nil : json.encodedString }
}

/// A job's stored targeting could not be read.
public struct JobTargetingError: Error, Sendable, Equatable {
    public var message: String
    public init(message: String) { self.message = message }
}

/// Which devices one wave of a local-time job takes: those whose time zone, *as it was at the job's reference
/// instant*, is one of `zones` (devices without a zone count as in `defaultZone`, the app's `defaultTimeZone`).
/// Every wave of a job asks about the same instant, and a device's zone at a past instant never changes (a later
/// registration only adds to the device's zone history, see ``TimeZoneHistory``), so each device is in exactly one
/// wave however often its zone changes while the waves run — and no wave writes anything per device.
public struct LocalTimeWave: Sendable, Equatable {
    /// The local-time job this wave belongs to.
    public var job: String
    /// The wave's position in the job (0-based, in time order).
    public var index: Int
    /// The IANA zones whose devices this wave takes.
    public var zones: [String]
    /// True when devices without a zone belong here (their app's `defaultTimeZone` is one of `zones`).
    public var includesUnzoned: Bool
    /// The instant (ms on the store's clock) whose zones decide membership: the job's first wave time.
    public var referenceMs: Int64
    /// What was asked (`09:00`, `09:00 on 2026-12-24`), for display.
    public var localTime: String
    /// The wave's zones' UTC offset at its instant, in seconds.
    public var utcOffsetSeconds: Int

    public init(
        job: String, index: Int, zones: [String], includesUnzoned: Bool, referenceMs: Int64, localTime: String = "",
        utcOffsetSeconds: Int = 0
    ) {
        self.job = job
        self.index = index
        self.zones = zones
        self.includesUnzoned = includesUnzoned
        self.referenceMs = referenceMs
        self.localTime = localTime
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    var json: JSONValue {
        .object([
            ("job", .string(job)), ("index", .int(Int64(index))), ("zones", .array(zones.map { .string($0) })),
            ("includesUnzoned", .bool(includesUnzoned)), ("referenceMs", .int(referenceMs)), ("localTime", .string(localTime)),
            ("utcOffsetSeconds", .int(Int64(utcOffsetSeconds))),
        ])
    }

    init?(json: JSONValue) {
        guard let job = json["job"]?.stringValue, let index = json["index"]?.intValue,
              let zones = json["zones"]?.arrayValue, case .bool(let unzoned)? = json["includesUnzoned"],
              let reference = json["referenceMs"]?.intValue
        else { return nil }
        self.init(
            job: job, index: Int(index), zones: zones.compactMap(\.stringValue), includesUnzoned: unzoned, referenceMs: reference,
            localTime: json["localTime"]?.stringValue ?? "", utcOffsetSeconds: Int(json["utcOffsetSeconds"]?.intValue ?? 0))
    }
}
