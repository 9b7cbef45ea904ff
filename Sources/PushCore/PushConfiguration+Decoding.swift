extension PushConfiguration {
    /// Decodes a configuration file's bytes. Relative paths resolve against `baseDirectory` (the directory
    /// holding the file). Unknown keys, wrong types and inline passwords are errors naming the key. An app's
    /// `defaultTimeZone` is checked against (and made canonical by) the tz database `zones`. `environment`'s
    /// `PUSHCTL_` variables override the file's per-deployment keys (``ConfigurationEnvironment``); what they set is
    /// in ``environmentOverrides``.
    public init(
        json bytes: some Collection<UInt8>, baseDirectory: String, zones: TimeZoneNames, environment: ConfigurationEnvironment? = nil
    ) throws(ConfigurationError) {
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: bytes) } catch { throw ConfigurationError("config: \(error)") }
        let (root, overrides) = try environment?.apply(to: parsed) ?? (parsed, [])
        var top = try Fields(root, at: "config")
        let base = baseDirectory
        let databaseText = try top.string("database") ?? "../data/pushctl.sqlite"
        let database: String
        if Self.isPostgresURL(databaseText) {
            try Self.checkPostgresURL(databaseText)
            database = databaseText
        } else {
            database = Self.resolve(databaseText, against: base)
        }
        let passwordFile = try top.string("databasePasswordFile").map { Self.resolve($0, against: base) }
        let passwordEnv = try top.string("databasePasswordEnv")
        if passwordFile != nil && passwordEnv != nil {
            throw ConfigurationError("config: give databasePasswordFile or databasePasswordEnv, not both")
        }
        if (passwordFile != nil || passwordEnv != nil) && !Self.isPostgresURL(database) {
            throw ConfigurationError("config: databasePasswordFile / databasePasswordEnv apply to a postgres:// database only")
        }

        var server = ServerSettings()
        if let value = try top.take("server") {
            var s = try Fields(value, at: "server")
            server.host = try s.string("host") ?? server.host
            server.port = try s.port("port") ?? server.port
            server.rateLimitPerSecond = try s.number("rateLimitPerSecond") ?? server.rateLimitPerSecond
            server.rateLimitBurst = try s.number("rateLimitBurst") ?? server.rateLimitBurst
            if let adminValue = try s.take("admin") {
                var a = try Fields(adminValue, at: "server.admin")
                server.admin.host = try a.string("host") ?? server.admin.host
                server.admin.port = try a.port("port") ?? server.admin.port
                try a.finish()
            }
            try s.finish()
        }

        var simulator = SimulatorSettings(certificates: Self.resolve("../Certificates/dev", against: base))
        if let value = try top.take("simulator") {
            var s = try Fields(value, at: "simulator")
            simulator.host = try s.string("host") ?? simulator.host
            simulator.port = try s.port("port") ?? simulator.port
            if let dir = try s.string("certificates") { simulator.certificates = Self.resolve(dir, against: base) }
            try s.finish()
        }

        var apps: [String: AppSettings] = [:]
        if let value = try top.take("apps") {
            guard let pairs = value.objectPairs else { throw ConfigurationError("config: 'apps' must be an object") }
            for (id, appValue) in pairs {
                guard Self.isValidAppId(id) else {
                    throw ConfigurationError("apps: app id '\(id)' must be 1-64 characters of A-Z a-z 0-9 . _ -")
                }
                apps[id] = try Self.decodeApp(appValue, id: id, base: base, zones: zones)
            }
        }
        let databaseOutage = try top.int("databaseOutageLimitSeconds") ?? Self.defaultDatabaseOutageLimitSeconds
        guard AppSettings.outageLimitRange.contains(databaseOutage) else {
            throw ConfigurationError("config.databaseOutageLimitSeconds must be between 1 and 86400 seconds, not \(databaseOutage)")
        }
        let shardSize = try top.int("shardSize") ?? BroadcastShard.defaultSize
        guard (100...10_000_000).contains(shardSize) else {
            throw ConfigurationError("config.shardSize must be between 100 and 10000000 devices, not \(shardSize)")
        }
        let shardLease = try top.int("shardLeaseSeconds") ?? Self.defaultShardLeaseSeconds
        guard (2...3600).contains(shardLease) else {
            throw ConfigurationError("config.shardLeaseSeconds must be between 2 and 3600 seconds, not \(shardLease)")
        }
        let retentionDays = try top.int("deliveryRetentionDays") ?? Self.defaultDeliveryRetentionDays
        guard Self.deliveryRetentionRange.contains(retentionDays) else {
            throw ConfigurationError("config.deliveryRetentionDays must be between 1 and 3650 days, not \(retentionDays)")
        }
        let proxy = try Self.decodeProxy(&top, at: "config", base: base)
        let deliveryLog = try Self.decodeDeliveryLog(&top, at: "config") ?? .default
        let healthWarningDays = try top.int("healthWarningDays") ?? Self.defaultHealthWarningDays
        guard (0...3650).contains(healthWarningDays) else {
            throw ConfigurationError("config.healthWarningDays must be between 0 and 3650 days, not \(healthWarningDays)")
        }
        try top.finish()
        self.init(
            database: database, server: server, simulator: simulator, apps: apps,
            databaseOutageLimitSeconds: databaseOutage)
        self.shardSize = shardSize
        shardLeaseSeconds = shardLease
        deliveryRetentionDays = retentionDays
        databasePasswordFile = passwordFile
        databasePasswordEnv = passwordEnv
        self.proxy = proxy
        self.deliveryLog = deliveryLog
        self.healthWarningDays = healthWarningDays
        environmentOverrides = overrides
    }

    /// `deliveryLog` from one object (the top level or an app): `"all"` or `"failures"`, or nil when absent.
    private static func decodeDeliveryLog(_ f: inout Fields, at: String) throws(ConfigurationError) -> DeliveryLogScope? {
        guard let text = try f.string("deliveryLog") else { return nil }
        guard let scope = DeliveryLogScope(rawValue: text) else {
            throw ConfigurationError(#"\#(at).deliveryLog must be "all" or "failures", not "\#(text)""#)
        }
        return scope
    }

    /// `proxy` with `proxyCredentialsFile` or `proxyCredentialsEnv` from one object (the top level or an app).
    /// Credentials without a proxy, both credential sources, or credentials inside the URL are errors.
    private static func decodeProxy(_ f: inout Fields, at: String, base: String) throws(ConfigurationError) -> ProxySettings? {
        let text = try f.string("proxy")
        let file = try f.string("proxyCredentialsFile").map { resolve($0, against: base) }
        let env = try f.string("proxyCredentialsEnv")
        if file != nil && env != nil {
            throw ConfigurationError("\(at): give proxyCredentialsFile or proxyCredentialsEnv, not both")
        }
        let credentials: PasswordSource? = file.map { .file($0) } ?? env.map { .environment($0) }
        guard let text else {
            if credentials != nil { throw ConfigurationError("\(at): proxyCredentialsFile / proxyCredentialsEnv need a proxy") }
            return nil
        }
        do {
            return try ProxySettings(parsing: text, credentials: credentials)
        } catch {
            throw ConfigurationError("\(at).\(error.message)")
        }
    }

    /// True when `database` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a
    /// SQLite file.
    public static func isPostgresURL(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }

    /// Refuses a PostgreSQL URL that carries a password: configuration files get copied, logged and
    /// committed, so the password comes from `databasePasswordFile` or `databasePasswordEnv` instead.
    static func checkPostgresURL(_ url: String) throws(ConfigurationError) {
        let rest = url.drop(while: { $0 != "/" }).dropFirst(2)
        let authority = rest.prefix(while: { $0 != "/" && $0 != "?" })
        if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") {
            throw ConfigurationError(
                "config.database: put no password in the URL; use databasePasswordFile or databasePasswordEnv")
        }
    }

    /// True for app ids usable in URLs and file names.
    public static func isValidAppId(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
            }
    }

    private static func decodeApp(
        _ value: JSONValue, id: String, base: String, zones: TimeZoneNames
    ) throws(ConfigurationError) -> AppSettings {
        let at = "apps.\(id)"
        var f = try Fields(value, at: at)
        let flatKeys = APNsSettings.keys.filter { f.contains($0) }
        var apns: APNsSettings?
        var apnsKeysAreFlat = false
        if let section = try f.take("apns") {
            if !flatKeys.isEmpty {
                let named = flatKeys.map { "\(at).\($0)" }.joined(separator: ", ")
                throw ConfigurationError("\(at): \(named) and \(at).apns both configure APNs; move the keys into \(at).apns")
            }
            var a = try Fields(section, at: "\(at).apns")
            apns = try decodeAPNs(&a, at: "\(at).apns", base: base)
            try a.finish()
        } else if !flatKeys.isEmpty {
            apns = try decodeAPNs(&f, at: at, base: base)
            apnsKeysAreFlat = true
        }
        let registrationKeys = try f.keyHashes("registrationKeys")
        let sendKeys = try f.keyHashes("sendKeys")
        let window = try f.int("window")
        if let window, !AppSettings.windowRange.contains(window) {
            throw ConfigurationError("\(at).window must be between 1 and 10000 notifications, not \(window)")
        }
        let connections = try f.int("connections")
        if let connections, !AppSettings.connectionsRange.contains(connections) {
            throw ConfigurationError("\(at).connections must be between 1 and 16 HTTP/2 connections, not \(connections)")
        }
        let outageLimit = try f.int("outageLimitSeconds")
        if let outageLimit, !AppSettings.outageLimitRange.contains(outageLimit) {
            throw ConfigurationError("\(at).outageLimitSeconds must be between 1 and 86400 seconds, not \(outageLimit)")
        }
        let webhook = try f.take("webhook").map { (value) throws(ConfigurationError) in
            try decodeWebhook(value, at: "\(at).webhook", base: base)
        }
        let proxy = try decodeProxy(&f, at: at, base: base)
        let deliveryLog = try decodeDeliveryLog(&f, at: at)
        if try f.has("userSecret") {
            throw ConfigurationError("\(at).userSecret is not allowed: use userSecretFile or userSecretEnv")
        }
        let userSecretFile = try f.string("userSecretFile").map { resolve($0, against: base) }
        let userSecretEnv = try f.string("userSecretEnv")
        if userSecretFile != nil, userSecretEnv != nil {
            throw ConfigurationError("\(at): give userSecretFile or userSecretEnv, not both")
        }
        let webPush = try f.take("webpush").map { (value) throws(ConfigurationError) in
            try decodeWebPush(value, at: "\(at).webpush", base: base)
        }
        let fcm = try f.take("fcm").map { (value) throws(ConfigurationError) in
            try decodeFCM(value, at: "\(at).fcm", base: base)
        }
        let hms = try f.take("hms").map { (value) throws(ConfigurationError) in
            try decodeHMS(value, at: "\(at).hms", base: base)
        }
        let harmonyos = try f.take("harmonyos").map { (value) throws(ConfigurationError) in
            try decodeHarmonyOS(value, at: "\(at).harmonyos", base: base)
        }
        let unifiedPush = try f.take("unifiedpush").map { (value) throws(ConfigurationError) in
            try decodeUnifiedPush(value, at: "\(at).unifiedpush", base: base)
        }
        var defaultTimeZone: String?
        if let zone = try f.string("defaultTimeZone") {
            guard let canonical = zones.canonical(zone) else {
                throw ConfigurationError("\(at).defaultTimeZone must be an IANA time zone name such as Europe/Berlin, not '\(zone)'")
            }
            defaultTimeZone = canonical
        }
        try f.finish()
        if apns == nil && webPush == nil && fcm == nil && hms == nil && harmonyos == nil && unifiedPush == nil {
            throw ConfigurationError(
                "\(at) needs at least one service: \(at).apns (iOS, macOS), \(at).webpush (browsers), \(at).fcm (Android), \(at).hms (Huawei), \(at).harmonyos (HarmonyOS NEXT) or \(at).unifiedpush (de-Googled Android)")
        }
        var app = AppSettings(
            apns: apns, webPush: webPush, fcm: fcm, hms: hms, unifiedPush: unifiedPush, registrationKeys: registrationKeys, sendKeys: sendKeys,
            window: window, connections: connections, outageLimitSeconds: outageLimit, webhook: webhook)
        app.apnsKeysAreFlat = apnsKeysAreFlat
        app.harmonyos = harmonyos
        app.proxy = proxy
        app.deliveryLog = deliveryLog
        app.userSecret = userSecretFile.map { .file($0) } ?? userSecretEnv.map { .environment($0) }
        app.defaultTimeZone = defaultTimeZone
        return app
    }

    /// The APNs keys (`topic`, `auth`, `endpoint`, …) from `f`: an `apps.ID.apns` section, or the app object itself
    /// in the flat form of older files. `topic` and `auth` are required.
    private static func decodeAPNs(_ f: inout Fields, at: String, base: String) throws(ConfigurationError) -> APNsSettings {
        guard let topic = try f.string("topic"), !topic.isEmpty else {
            throw ConfigurationError("\(at).topic is required (the app's bundle id)")
        }
        let endpoint = try APNsEndpoint(parsing: try f.string("endpoint") ?? "development")
        func optionalEndpoint(_ key: String) throws(ConfigurationError) -> APNsEndpoint? {
            guard let text = try f.string(key) else { return nil }
            do { return try APNsEndpoint(parsing: text) } catch { throw ConfigurationError("\(at).\(key): \(error.message)") }
        }
        let channelEndpoint = try optionalEndpoint("channelEndpoint")
        let broadcastEndpoint = try optionalEndpoint("broadcastEndpoint")
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        guard let authValue = try f.take("auth") else {
            throw ConfigurationError("\(at).auth is required ({\"p12\",\"passwordFile\"|\"passwordEnv\"} or {\"p8\",\"keyId\",\"teamId\"})")
        }
        let auth = try decodeAuth(authValue, at: "\(at).auth", base: base)
        var payloadLimit: Int?
        if let limit = try f.int("payloadLimit") {
            guard (1...5120).contains(limit) else {
                throw ConfigurationError("\(at).payloadLimit must be between 1 and 5120 bytes, not \(limit)")
            }
            payloadLimit = limit
        }
        return APNsSettings(
            topic: topic, endpoint: endpoint, caFile: caFile, auth: auth, payloadLimit: payloadLimit,
            channelEndpoint: channelEndpoint, broadcastEndpoint: broadcastEndpoint)
    }

    /// `apps.ID.fcm`: `{"serviceAccount", "endpoint"?, "caFile"?}`. The file's contents are read by the sender
    /// (``FCMServiceAccount`` in PushSender), which names the file in its errors; its mode by ``secretFiles``.
    private static func decodeFCM(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> FCMSettings {
        var f = try Fields(value, at: at)
        guard let account = try f.string("serviceAccount"), !account.isEmpty else {
            throw ConfigurationError("\(at).serviceAccount is required (the service-account JSON file Firebase's console downloads)")
        }
        var endpoint = FCMSettings.Endpoint.production
        if let text = try f.string("endpoint") {
            do { endpoint = try FCMSettings.Endpoint(parsing: text) } catch { throw ConfigurationError("\(at).\(error.message)") }
        }
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        try f.finish()
        return FCMSettings(serviceAccount: resolve(account, against: base), endpoint: endpoint, caFile: caFile)
    }

    /// `apps.ID.hms`: `{"clientId", "clientSecretFile", "endpoint"?, "caFile"?, "category"?, "defaultTitle"?,
    /// "badgeClass"?}`. The secret's contents are read by the sender; its mode by ``secretFiles``. A secret given by value
    /// is refused: it would sit in the configuration file.
    private static func decodeHMS(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> HMSSettings {
        var f = try Fields(value, at: at)
        guard let clientId = try f.string("clientId"), HMSSettings.isClientId(clientId) else {
            throw ConfigurationError("\(at).clientId is required: the OAuth 2.0 client ID of the app (digits, AppGallery Connect's project settings)")
        }
        if try f.has("clientSecret") {
            throw ConfigurationError("\(at).clientSecret is not allowed: put the secret in a file and name it in clientSecretFile")
        }
        guard let secret = try f.string("clientSecretFile"), !secret.isEmpty else {
            throw ConfigurationError("\(at).clientSecretFile is required (a file holding the app's OAuth 2.0 client secret)")
        }
        var endpoint = ServiceEndpoint.production
        if let text = try f.string("endpoint") {
            do { endpoint = try ServiceEndpoint(parsing: text) } catch { throw ConfigurationError("\(at).\(error.message)") }
        }
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        func text(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = try f.string(key) else { return nil }
            guard !value.isEmpty, value.utf8.count <= 256 else {
                throw ConfigurationError("\(at).\(key) must be a non-empty string of at most 256 bytes")
            }
            return value
        }
        let category = try text("category")
        let defaultTitle = try text("defaultTitle")
        let badgeClass = try text("badgeClass")
        try f.finish()
        return HMSSettings(
            clientId: clientId, clientSecretFile: resolve(secret, against: base), endpoint: endpoint, caFile: caFile,
            category: category, defaultTitle: defaultTitle, badgeClass: badgeClass)
    }

    /// `apps.ID.harmonyos`: `{"projectId", "serviceAccount", "endpoint"?, "caFile"?, "category", "defaultTitle"?}`.
    /// The key file's contents are read by the sender (``HarmonyOSServiceAccount`` in PushSender); its mode by
    /// ``secretFiles``. The category is required and must be one Huawei documents (``HarmonyOSSettings/categories``).
    private static func decodeHarmonyOS(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> HarmonyOSSettings {
        var f = try Fields(value, at: at)
        guard let projectId = try f.string("projectId"), HarmonyOSSettings.isProjectId(projectId) else {
            throw ConfigurationError("\(at).projectId is required: the AppGallery Connect project ID (Project settings; 1-64 of A-Z a-z 0-9 - _)")
        }
        guard let account = try f.string("serviceAccount"), !account.isEmpty else {
            throw ConfigurationError("\(at).serviceAccount is required (the service-account key file the API Console downloads)")
        }
        var endpoint = ServiceEndpoint.production
        if let text = try f.string("endpoint") {
            do { endpoint = try ServiceEndpoint(parsing: text) } catch { throw ConfigurationError("\(at).\(error.message)") }
        }
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        guard let category = try f.string("category") else {
            throw ConfigurationError(
                "\(at).category is required (without it Push Kit counts every notification as marketing, capped per device per day): one of \(HarmonyOSSettings.categories.joined(separator: ", "))")
        }
        guard HarmonyOSSettings.categories.contains(category) else {
            throw ConfigurationError("\(at).category must be one of \(HarmonyOSSettings.categories.joined(separator: ", ")), not '\(category)'")
        }
        var defaultTitle: String?
        if let title = try f.string("defaultTitle") {
            guard !title.isEmpty, title.utf8.count <= 256 else {
                throw ConfigurationError("\(at).defaultTitle must be a non-empty string of at most 256 bytes")
            }
            defaultTitle = title
        }
        try f.finish()
        return HarmonyOSSettings(
            projectId: projectId, serviceAccount: resolve(account, against: base), endpoint: endpoint, caFile: caFile,
            category: category, defaultTitle: defaultTitle)
    }

    /// `apps.ID.webpush`: `{"vapidKey", "subject", "allowedHosts"?, "caFile"?, "declarative"?}`.
    private static func decodeWebPush(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> WebPushSettings {
        var f = try Fields(value, at: at)
        guard let vapidKey = try f.string("vapidKey"), !vapidKey.isEmpty else {
            throw ConfigurationError("\(at).vapidKey is required (a P-256 private key in PEM: pushctl webpush key new --out FILE)")
        }
        guard let subject = try f.string("subject") else {
            throw ConfigurationError("\(at).subject is required (a mailto: or https: contact the push services may reach)")
        }
        var hosts: [String] = []
        if let list = try f.take("allowedHosts") {
            guard case .array(let items) = list else { throw ConfigurationError("\(at).allowedHosts must be an array of \"host[:port]\"") }
            for item in items {
                guard let s = item.stringValue else { throw ConfigurationError("\(at).allowedHosts must be an array of \"host[:port]\"") }
                hosts.append(s)
            }
        }
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        var declarative = false
        if let v = try f.take("declarative") {
            guard case .bool(let b) = v else { throw ConfigurationError("\(at).declarative must be true or false") }
            declarative = b
        }
        try f.finish()
        do {
            return try WebPushSettings(
                vapidKey: resolve(vapidKey, against: base), subject: subject, allowedHosts: hosts, caFile: caFile, declarative: declarative)
        } catch {
            throw ConfigurationError("\(at).\(error.message)")
        }
    }

    /// `apps.ID.unifiedpush`: `{"vapidKey", "subject", "exemptHosts"?, "caFile"?}`.
    private static func decodeUnifiedPush(
        _ value: JSONValue, at: String, base: String
    ) throws(ConfigurationError) -> UnifiedPushSettings {
        var f = try Fields(value, at: at)
        guard let vapidKey = try f.string("vapidKey"), !vapidKey.isEmpty else {
            throw ConfigurationError("\(at).vapidKey is required (a P-256 private key in PEM: pushctl webpush key new --out FILE)")
        }
        guard let subject = try f.string("subject") else {
            throw ConfigurationError("\(at).subject is required (a mailto: or https: contact the distributors may reach)")
        }
        var hosts: [String] = []
        if let list = try f.take("exemptHosts") {
            let problem = "\(at).exemptHosts must be an array of \"host[:port]\" or \"address/length\""
            guard case .array(let items) = list else { throw ConfigurationError(problem) }
            for item in items {
                guard let s = item.stringValue else { throw ConfigurationError(problem) }
                hosts.append(s)
            }
        }
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        try f.finish()
        do {
            return try UnifiedPushSettings(
                vapidKey: resolve(vapidKey, against: base), subject: subject, exemptHosts: hosts, caFile: caFile)
        } catch {
            throw ConfigurationError("\(at).\(error.message)")
        }
    }

    private static func decodeWebhook(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> WebhookSettings {
        var f = try Fields(value, at: at)
        if try f.has("secret") {
            throw ConfigurationError("\(at).secret is not allowed: use secretFile or secretEnv")
        }
        guard let url = try f.string("url") else { throw ConfigurationError("\(at).url is required") }
        let lower = url.lowercased()
        let rest = lower.hasPrefix("https://") ? lower.dropFirst(8) : lower.hasPrefix("http://") ? lower.dropFirst(7) : nil
        guard let rest, let host = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first, !host.isEmpty
        else { throw ConfigurationError("\(at).url must be an http:// or https:// URL, not \(url)") }
        if host.contains("@") {
            throw ConfigurationError("\(at).url must not hold credentials: the receiver checks the signature")
        }
        let file = try f.string("secretFile")
        let env = try f.string("secretEnv")
        let caFile = try f.string("caFile").map { resolve($0, against: base) }
        try f.finish()
        switch (file, env) {
        case (let file?, nil): return WebhookSettings(url: url, secret: .file(resolve(file, against: base)), caFile: caFile)
        case (nil, let env?): return WebhookSettings(url: url, secret: .environment(env), caFile: caFile)
        default: throw ConfigurationError("\(at) needs exactly one of secretFile or secretEnv (the signing secret)")
        }
    }

    private static func decodeAuth(_ value: JSONValue, at: String, base: String) throws(ConfigurationError) -> AuthSettings {
        var f = try Fields(value, at: at)
        if try f.has("password") {
            throw ConfigurationError("\(at).password is not allowed: use passwordFile or passwordEnv")
        }
        if let p12 = try f.string("p12") {
            let file = try f.string("passwordFile")
            let env = try f.string("passwordEnv")
            try f.finish()
            switch (file, env) {
            case (let file?, nil): return .certificate(p12: resolve(p12, against: base), password: .file(resolve(file, against: base)))
            case (nil, let env?): return .certificate(p12: resolve(p12, against: base), password: .environment(env))
            default: throw ConfigurationError("\(at) needs exactly one of passwordFile or passwordEnv")
            }
        }
        if let p8 = try f.string("p8") {
            guard let keyId = try f.string("keyId"), let teamId = try f.string("teamId") else {
                throw ConfigurationError("\(at) with p8 needs keyId and teamId")
            }
            try f.finish()
            return .token(p8: resolve(p8, against: base), keyId: keyId, teamId: teamId)
        }
        throw ConfigurationError("\(at) needs p12 (with passwordFile or passwordEnv) or p8 (with keyId and teamId)")
    }

    /// Joins a relative path to `base` and folds `.` and `..` components; absolute paths are kept.
    public static func resolve(_ path: String, against base: String) -> String {
        let joined = path.hasPrefix("/") ? path : (base.isEmpty ? path : base + "/" + path)
        var parts: [Substring] = []
        for part in joined.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(part)
        }
        let body = parts.joined(separator: "/")
        return joined.hasPrefix("/") ? "/" + body : (body.isEmpty ? "." : body)
    }
}

/// Reads an object's fields one by one and reports the keys nobody asked for.
private struct Fields {
    var remaining: [(String, JSONValue)]
    let at: String

    init(_ value: JSONValue, at: String) throws(ConfigurationError) {
        guard let pairs = value.objectPairs else { throw ConfigurationError("\(at) must be an object") }
        remaining = pairs
        self.at = at
    }

    mutating func take(_ key: String) throws(ConfigurationError) -> JSONValue? {
        guard let i = remaining.firstIndex(where: { $0.0 == key }) else { return nil }
        let value = remaining.remove(at: i).1
        return value == .null ? nil : value
    }

    mutating func has(_ key: String) throws(ConfigurationError) -> Bool { contains(key) }

    /// True when the object still holds `key`.
    func contains(_ key: String) -> Bool { remaining.contains(where: { $0.0 == key }) }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let v = try take(key) else { return nil }
        guard let s = v.stringValue else { throw ConfigurationError("\(at).\(key) must be a string") }
        return s
    }

    mutating func int(_ key: String) throws(ConfigurationError) -> Int? {
        guard let v = try take(key) else { return nil }
        guard let i = v.intValue else { throw ConfigurationError("\(at).\(key) must be an integer") }
        return Int(i)
    }

    mutating func number(_ key: String) throws(ConfigurationError) -> Double? {
        guard let v = try take(key) else { return nil }
        guard let d = v.doubleValue, d > 0 else { throw ConfigurationError("\(at).\(key) must be a positive number") }
        return d
    }

    mutating func port(_ key: String) throws(ConfigurationError) -> Int? {
        guard let p = try int(key) else { return nil }
        guard (0...65535).contains(p) else { throw ConfigurationError("\(at).\(key) must be 0…65535") }
        return p
    }

    mutating func keyHashes(_ key: String) throws(ConfigurationError) -> [String] {
        guard let v = try take(key) else { return [] }
        guard case .array(let items) = v else { throw ConfigurationError("\(at).\(key) must be an array of \"sha256:<hex>\"") }
        var out: [String] = []
        for item in items {
            guard let s = item.stringValue, s.hasPrefix("sha256:"), s.utf8.count == 71,
                s.utf8.dropFirst(7).allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            else {
                throw ConfigurationError("\(at).\(key) entries must be \"sha256:\" + 64 lowercase hex digits (see pushctl apikey new)")
            }
            out.append(s)
        }
        return out
    }

    func finish() throws(ConfigurationError) {
        if let (key, _) = remaining.first {
            throw ConfigurationError("\(at): unknown key '\(key)'")
        }
    }
}
