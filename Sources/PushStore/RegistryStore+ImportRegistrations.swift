import PushCore

extension RegistryStore {
    /// Imports registrations given as JSON lines (`tokens import --format jsonl`): one registration object per line,
    /// exactly what `POST …/devices` takes as JSON (``RegistrationFields``: token, oldToken, channels, environment and
    /// the installation fields, `user` included — the operator holding the configuration needs no `userAuth`).
    /// Blank lines and `#` comments are skipped. Batches of `batchSize` lines are validated completely before
    /// anything is written and then written in one transaction; a batch with an invalid line writes nothing, and
    /// every invalid line is reported with its number and the field it names.
    ///
    /// Without `service`, each line's own `service` (as in the API's body; `apns` when left out) says what it is, so
    /// a file of mixed registrations imports as the API would take them one by one; `webPush` is the app's host policy,
    /// which judges the Web Push lines (nil: the app has no Web Push, and such a line is refused). With `service`
    /// `.webpush` (`tokens import --service webpush`) every line is a Web Push registration, `{"subscription": …,
    /// …installation fields…}` (`"service": "webpush"` implied); with `.fcm` (`--service fcm --format jsonl`) every
    /// line is an FCM registration, `{"token": "<registration token>", …installation fields…}` (`"service": "fcm"`
    /// implied); a line naming another service is refused.
    ///
    /// UnifiedPush lines (`{"service": "unifiedpush", "subscription": {"endpoint", "keys"}, …}`) are judged by form and
    /// by `unifiedPush`'s address rule (nil: the app has none), but an import does not run discovery — it would be one
    /// request per line to hosts the lines name — so they are taken only when the operator says so
    /// (`discoverySkipped`, `tokens import --skip-discovery`): the endpoints come from their own records, where an
    /// earlier server accepted them. Every send still checks every address.
    public func importRegistrations(
        app: String, lines: some Sequence<String>, defaultEnvironment: APNsEnvironment, batchSize: Int = 10_000,
        webPush: WebPushHostPolicy? = nil, unifiedPush: UnifiedPushHostPolicy? = nil, discoverySkipped: Bool = false,
        service: PushService? = nil
    ) throws(StoreError) -> ImportReport {
        let implied = service
        var batches = ImportBatches<RegistrationRequest>(size: batchSize)
        return try batches.importLines(lines) { (text) throws(ImportLineError) in
            do throws(FieldError) {
                let json: JSONValue
                do { json = try JSONValue(parsing: String(text)) } catch {
                    throw FieldError(field: "json", message: "not a JSON object: \(error)")
                }
                var line = json
                if let implied, let pairs = json.objectPairs {
                    let name = implied.rawValue
                    if let given = json["service"], given != .string(name) {
                        throw FieldError(field: "service", message: "service must be \(name) (or left out) with --service \(name)")
                    }
                    if json["service"] == nil, implied != .apns { line = .object([("service", .string(name))] + pairs) }
                }
                let fields = try RegistrationFields.parse(json: line, webPush: webPush, unifiedPush: unifiedPush)
                if fields.service == .unifiedpush, !discoverySkipped {
                    throw FieldError(
                        field: "service",
                        message: "a unifiedpush line is imported only with --skip-discovery: an import does not run UnifiedPush discovery")
                }
                if fields.userAuth != nil {
                    throw FieldError(field: "userAuth", message: "userAuth is for apps; an import names users directly")
                }
                return fields.request(app: app, defaultEnvironment: defaultEnvironment)
            } catch {
                throw ImportLineError(message: error.message)
            }
        } write: { (requests) throws(StoreError) in
            try registerAll(requests)
        }
    }
}

extension RegistryStore {
    /// Imports the tokens of a token-addressed service, one per line verbatim (`tokens import --service fcm` or
    /// `--service hms`; blank lines and `#` comments skipped): FCM registration tokens judged by
    /// ``FCMRegistrationToken``, HMS push tokens by ``HMSPushToken``, as the API judges them, and registered as the API
    /// registers them (key `DeviceKey.fcm(token:)` / `DeviceKey.hms(token:)`, the token stored verbatim) with
    /// `environment` and `channels` (nil: kept). Batched as every import: a batch with an invalid line writes nothing,
    /// and every invalid line is reported with its number. `service` must be `.fcm`, `.hms` or `.harmonyos` (HarmonyOS push tokens judged by ``HarmonyOSPushToken``, key
    /// `DeviceKey.harmonyos(token:)`).
    public func importRegistrationTokens(
        app: String, service: PushService, lines: some Sequence<String>, environment: APNsEnvironment,
        channels: [String]? = nil, batchSize: Int = 10_000
    ) throws(StoreError) -> ImportReport {
        guard service == .fcm || service == .hms || service == .harmonyos else {
            throw StoreError(.invalidInput, "\(service.rawValue) devices are not imported as bare tokens")
        }
        let channels = try channels.map { (c) throws(StoreError) in try Channels.normalize(c) }
        var batches = ImportBatches<RegistrationRequest>(size: batchSize)
        return try batches.importLines(lines) { (text) throws(ImportLineError) in
            do throws(FieldError) {
                if service == .harmonyos {
                    let token = try HarmonyOSPushToken(parsing: String(text))
                    return RegistrationRequest(app: app, harmonyosToken: token, channels: channels, environment: environment)
                }
                if service == .hms {
                    let token = try HMSPushToken(parsing: String(text))
                    return RegistrationRequest(app: app, hmsToken: token, channels: channels, environment: environment)
                }
                let token = try FCMRegistrationToken(parsing: String(text))
                return RegistrationRequest(app: app, fcmToken: token, channels: channels, environment: environment)
            } catch {
                throw ImportLineError(message: error.message)
            }
        } write: { (requests) throws(StoreError) in
            try registerAll(requests)
        }
    }
}

extension RegistryStore {
    /// Writes one import batch of registrations (one transaction); the first failure (a key another service
    /// holds) fails the import.
    fileprivate func registerAll(_ requests: [RegistrationRequest]) throws(StoreError) {
        for result in registerBatch(requests) {
            if case .failure(let error) = result { throw error }
        }
    }
}
