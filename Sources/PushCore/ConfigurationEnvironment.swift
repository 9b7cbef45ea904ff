/// The configuration keys that differ per deployment, set from environment variables (containers, Kubernetes,
/// twelve-factor deployments), overriding the file: one naming rule, documented in docs/configuration.md
/// ("From the environment").
///
/// The rule: `PUSHCTL_` + the key's words in capitals joined by `_` — `PUSHCTL_DATABASE`, `PUSHCTL_SERVER_PORT`,
/// `PUSHCTL_ADMIN_PORT` (`server.admin.port`) — and for an app, `PUSHCTL_APP_<ID>_<KEY>`, the app id in capitals
/// with `.` and `-` as `_` (`example-live` → `EXAMPLE_LIVE`), the key one of ``appKeys``
/// (`PUSHCTL_APP_EXAMPLE_APNS_P8`). Only the keys listed here: the rest of a deployment's configuration is its
/// file (a Kubernetes ConfigMap). An app must be in the file: the environment changes where its secrets are, it
/// does not add apps.
///
/// Why so strict: a `PUSHCTL_` variable this version does not know is refused (exit 2, naming it), as an unknown key
/// in the file is, so a typo does not silently leave the file's value in force. A secret is never taken from a
/// variable's value (`PUSHCTL_DATABASE_PASSWORD`, `…_APNS_PASSWORD`, a PEM key in a path variable): the environment
/// of a process is readable in `/proc/PID/environ`, in `ps e`, in crash reports and in `kubectl describe`; the
/// refusal names the `…_FILE` variable that takes a path (Kubernetes mounts secrets as files). Values are never
/// printed: errors name the variable only.
public struct ConfigurationEnvironment: Sendable, Equatable {
    /// Every variable of this rule starts with it.
    public static let prefix = "PUSHCTL_"
    /// `PUSHCTL_` variables that are not configuration keys (read where they apply; not overrides). A variable the
    /// file names as a secret's source (`databasePasswordEnv`, `passwordEnv`, … `"PUSHCTL_DB_PASSWORD"`) is not one
    /// either (``apply(to:)`` leaves it alone).
    public static let otherVariables: Set<String> = ["PUSHCTL_CONFIG", "PUSHCTL_LOG_FORMAT"]

    /// What a variable sets: a string, a path (a relative one is made absolute against the working directory, as
    /// a path on the command line would be; the file's relative paths stay relative to the file) or a port.
    enum Kind: Sendable, Equatable { case string, path, port, databaseLocation }

    /// A top-level variable: its name after the prefix, the key path it sets, its kind, and keys it replaces
    /// (the alternative way to give the same thing, removed so the file's choice does not conflict).
    struct TopKey: Sendable {
        var name: String
        var path: [String]
        var kind: Kind
        var replaces: [String] = []
    }

    static let topKeys: [TopKey] = [
        TopKey(name: "DATABASE", path: ["database"], kind: .databaseLocation),
        TopKey(name: "DATABASE_PASSWORD_FILE", path: ["databasePasswordFile"], kind: .path, replaces: ["databasePasswordEnv"]),
        TopKey(name: "SERVER_HOST", path: ["server", "host"], kind: .string),
        TopKey(name: "SERVER_PORT", path: ["server", "port"], kind: .port),
        TopKey(name: "ADMIN_HOST", path: ["server", "admin", "host"], kind: .string),
        TopKey(name: "ADMIN_PORT", path: ["server", "admin", "port"], kind: .port),
        TopKey(name: "SIMULATOR_HOST", path: ["simulator", "host"], kind: .string),
        TopKey(name: "SIMULATOR_PORT", path: ["simulator", "port"], kind: .port),
        TopKey(name: "PROXY_CREDENTIALS_FILE", path: ["proxyCredentialsFile"], kind: .path, replaces: ["proxyCredentialsEnv"]),
    ]

    /// Where an app's key lives: in its APNs auth (flat, or under `apns` when the app has that block), or at a
    /// path inside the app; and the block that must be there (an override moves a file, it does not add a service).
    enum AppPlace: Sendable, Equatable {
        /// `auth.<key>` of the app's APNs settings; the auth must already be of the kind that has the key.
        case apnsAuth(String)
        /// A path inside the app object; `requires` is the block it belongs to (nil: the app itself).
        case app([String], requires: String?)
    }

    /// An app's variable: its name after `PUSHCTL_APP_<ID>_`, where it goes, and what it replaces.
    struct AppKey: Sendable {
        var name: String
        var place: AppPlace
        var replaces: [String] = []
    }

    /// The app keys, each a secret file's path (docs/configuration.md, "Secret files").
    static let appKeys: [AppKey] = [
        AppKey(name: "APNS_P8", place: .apnsAuth("p8")),
        AppKey(name: "APNS_P12", place: .apnsAuth("p12")),
        AppKey(name: "APNS_PASSWORD_FILE", place: .apnsAuth("passwordFile"), replaces: ["passwordEnv"]),
        AppKey(name: "WEBPUSH_VAPID_KEY", place: .app(["webpush", "vapidKey"], requires: "webpush")),
        AppKey(name: "FCM_SERVICE_ACCOUNT", place: .app(["fcm", "serviceAccount"], requires: "fcm")),
        AppKey(name: "HMS_CLIENT_SECRET_FILE", place: .app(["hms", "clientSecretFile"], requires: "hms")),
        AppKey(name: "HARMONYOS_SERVICE_ACCOUNT", place: .app(["harmonyos", "serviceAccount"], requires: "harmonyos")),
        AppKey(name: "WEBHOOK_SECRET_FILE", place: .app(["webhook", "secretFile"], requires: "webhook"), replaces: ["secretEnv"]),
        AppKey(name: "USER_SECRET_FILE", place: .app(["userSecretFile"], requires: nil), replaces: ["userSecretEnv"]),
        AppKey(name: "PROXY_CREDENTIALS_FILE", place: .app(["proxyCredentialsFile"], requires: nil), replaces: ["proxyCredentialsEnv"]),
    ]

    /// Names (after the prefix, or after an app's part) that would carry a secret's value: refused, naming the
    /// variable that takes a path instead.
    static let secretValueNames: [String: String] = [
        "DATABASE_PASSWORD": "DATABASE_PASSWORD_FILE",
        "PROXY_CREDENTIALS": "PROXY_CREDENTIALS_FILE",
        "APNS_PASSWORD": "APNS_PASSWORD_FILE",
        "WEBHOOK_SECRET": "WEBHOOK_SECRET_FILE",
        "USER_SECRET": "USER_SECRET_FILE",
        "HMS_CLIENT_SECRET": "HMS_CLIENT_SECRET_FILE",
    ]

    /// One override, as applied: the variable and the configuration key it set (for `pushctl doctor`'s report).
    public struct Override: Sendable, Equatable {
        public var variable: String
        public var key: String
    }

    /// The environment's `PUSHCTL_` variables that are configuration keys, by name.
    let variables: [(name: String, value: String)]
    /// The directory relative paths in variables resolve against.
    let workingDirectory: String
    /// Whether an app variable that names no app of the file is left alone instead of refused: for `doctor`, which
    /// loads each app of a file that fails to load on its own (the others' variables then name no app).
    public var ignoresOtherApps = false

    public static func == (a: Self, b: Self) -> Bool {
        a.workingDirectory == b.workingDirectory && a.ignoresOtherApps == b.ignoresOtherApps && a.variables.map(\.name) == b.variables.map(\.name)
            && a.variables.map(\.value) == b.variables.map(\.value)
    }

    /// Takes the `PUSHCTL_` variables of `environment` (the process's, passed in); relative paths resolve against
    /// `workingDirectory`.
    public init(_ environment: [String: String], workingDirectory: String) {
        variables = environment.filter { $0.key.hasPrefix(Self.prefix) && !Self.otherVariables.contains($0.key) }
            .sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        self.workingDirectory = workingDirectory
    }

    /// No override at all.
    public var isEmpty: Bool { variables.isEmpty }

    /// `root` (a configuration file's JSON) with every variable applied, and what each set. Throws naming the
    /// variable (never its value) for one this version does not know, a secret given by value, an app the file does
    /// not have, an override of a block the app lacks, or a value of the wrong form.
    public func apply(to root: JSONValue) throws(ConfigurationError) -> (JSONValue, [Override]) {
        var root = root
        guard root.objectPairs != nil else { return (root, []) }  // the decoder names what is wrong with it
        var applied: [Override] = []
        let appIds = (root["apps"]?.objectPairs ?? []).map(\.0)
        let named = Self.variablesNamed(by: root)
        for (variable, value) in variables where !named.contains(variable) {
            let name = String(variable.dropFirst(Self.prefix.count))
            if let fileForm = Self.secretValueNames[name] {
                throw Self.secretRefusal(variable, fileVariable: Self.prefix + fileForm)
            }
            if let top = Self.topKeys.first(where: { $0.name == name }) {
                let json = try typed(value, kind: top.kind, variable: variable)
                root = Self.setting(root, path: top.path, to: json, removing: top.replaces)
                applied.append(Override(variable: variable, key: top.path.joined(separator: ".")))
                continue
            }
            guard name.hasPrefix("APP_") else {
                throw ConfigurationError(
                    "environment: \(variable) is not a configuration variable (docs/configuration.md, \"From the environment\", lists them)")
            }
            let rest = String(name.dropFirst("APP_".count))
            let app: String, key: String
            do throws(ConfigurationError) { (app, key) = try Self.appAndKey(rest, variable: variable, appIds: appIds) } catch {
                if ignoresOtherApps { continue }
                throw error
            }
            guard case .object(let appPairs)? = root["apps"]?[app] else { continue }
            let appObject = JSONValue.object(appPairs)
            if let valueKind = Self.secretValueNames[key] {
                throw Self.secretRefusal(variable, fileVariable: "\(Self.prefix)APP_\(Self.environmentName(of: app))_\(valueKind)")
            }
            guard let appKey = Self.appKeys.first(where: { $0.name == key }) else {
                throw ConfigurationError(
                    "environment: \(variable): \(key) is not an app variable; an app's are \(Self.appKeys.map(\.name).joined(separator: ", "))")
            }
            let path = try Self.place(appKey, in: appObject, app: app, variable: variable)
            let json = try typed(value, kind: .path, variable: variable)
            root = Self.setting(root, path: ["apps", app] + path, to: json, removing: appKey.replaces)
            applied.append(Override(variable: variable, key: (["apps", app] + path).joined(separator: ".")))
        }
        return (root, applied)
    }

    /// The values of every `…Env` key in `json`: the variables the file reads secrets from.
    static func variablesNamed(by json: JSONValue) -> Set<String> {
        switch json {
        case .object(let pairs):
            var names: Set<String> = []
            for (key, value) in pairs {
                if key.hasSuffix("Env"), let name = value.stringValue { names.insert(name) }
                names.formUnion(variablesNamed(by: value))
            }
            return names
        case .array(let items): return items.reduce(into: []) { $0.formUnion(variablesNamed(by: $1)) }
        default: return []
        }
    }

    /// The refusal of a secret given by value.
    static func secretRefusal(_ variable: String, fileVariable: String) -> ConfigurationError {
        ConfigurationError(
            "environment: \(variable) would hold a secret in the environment, which /proc/PID/environ, `ps e` and crash "
                + "reports show: put it in a file (a Kubernetes secret mounts as one) and give the file's path as \(fileVariable)")
    }

    /// An app id as it appears in a variable's name: capitals, `.` and `-` as `_`.
    public static func environmentName(of app: String) -> String {
        String(app.uppercased().map { $0 == "." || $0 == "-" ? "_" : $0 })
    }

    /// Splits `rest` (after `PUSHCTL_APP_`) into the file's app id and the key; two app ids with one environment
    /// name, or none, are refused.
    static func appAndKey(_ rest: String, variable: String, appIds: [String]) throws(ConfigurationError) -> (String, String) {
        let matches = appIds.filter { rest.hasPrefix(environmentName(of: $0) + "_") }
            .map { ($0, String(rest.dropFirst(environmentName(of: $0).count + 1))) }
            .filter { match in appKeys.contains { $0.name == match.1 } || secretValueNames[match.1] != nil }
        guard let first = matches.first else {
            throw ConfigurationError(
                "environment: \(variable) names no app of the configuration file with one of its keys (PUSHCTL_APP_<ID>_<KEY>: the app "
                    + "id in capitals, . and - as _; the keys \(appKeys.map(\.name).joined(separator: ", ")))")
        }
        let apps = Set(matches.map(\.0))
        guard apps.count == 1 else {
            throw ConfigurationError(
                "environment: \(variable) could name apps \(apps.sorted().joined(separator: " and ")): give one of them another id")
        }
        return first
    }

    /// The path inside the app object `key` sets, checking the app has what it belongs to.
    static func place(_ key: AppKey, in app: JSONValue, app id: String, variable: String) throws(ConfigurationError) -> [String] {
        switch key.place {
        case .apnsAuth(let field):
            let prefix = app["apns"] != nil ? ["apns"] : []
            let auth = prefix.isEmpty ? app["auth"] : app["apns"]?["auth"]
            let kind = auth?["p8"] != nil ? "p8" : auth?["p12"] != nil ? "p12" : nil
            let wanted = field == "p8" ? "p8" : "p12"
            guard kind == wanted else {
                let has = kind.map { "APNs auth with a .\($0)" } ?? "no APNs auth"
                throw ConfigurationError(
                    "environment: \(variable): apps.\(id) has \(has) in the file; \(variable) replaces the path of a .\(wanted) the file names")
            }
            return prefix + ["auth", field]
        case .app(let path, let requires):
            if let requires, app[requires] == nil {
                throw ConfigurationError(
                    "environment: \(variable): apps.\(id) has no \(requires) block in the file; \(variable) replaces a path the file names")
            }
            return path
        }
    }

    /// `value` as the JSON the key takes; errors name the variable only.
    func typed(_ value: String, kind: Kind, variable: String) throws(ConfigurationError) -> JSONValue {
        switch kind {
        case .string:
            guard !value.isEmpty else { throw ConfigurationError("environment: \(variable) is empty") }
            return .string(value)
        case .port:
            guard let port = Int(value), (0...65535).contains(port) else {
                throw ConfigurationError("environment: \(variable) must be a port number (0-65535; 0 picks a free one)")
            }
            return .int(Int64(port))
        case .path, .databaseLocation:
            guard !value.isEmpty else { throw ConfigurationError("environment: \(variable) is empty") }
            if kind == .databaseLocation, PushConfiguration.isPostgresURL(value) { return .string(value) }
            // A key or certificate pasted where its path goes is a secret in the environment too.
            guard !value.contains("-----BEGIN"), !value.contains("\n") else {
                throw ConfigurationError(
                    "environment: \(variable) holds a key or certificate, not a path: put it in a file (a Kubernetes secret "
                        + "mounts as one) and give the file's path")
            }
            return .string(PushConfiguration.resolve(value, against: workingDirectory))
        }
    }

    /// `root` with `path` set to `value` (objects created on the way), and `removing` keys deleted beside it.
    static func setting(_ root: JSONValue, path: [String], to value: JSONValue, removing: [String]) -> JSONValue {
        guard let key = path.first else { return value }
        var pairs = root.objectPairs ?? []
        if path.count == 1 { pairs.removeAll { removing.contains($0.0) } }
        if let i = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[i].1 = setting(pairs[i].1, path: Array(path.dropFirst()), to: value, removing: removing)
        } else {
            pairs.append((key, setting(.object([]), path: Array(path.dropFirst()), to: value, removing: removing)))
        }
        return .object(pairs)
    }
}
