import PushCore

extension RegistryStore {
    /// Imports registrations given as JSON lines (`tokens import --format jsonl`): one registration object per line,
    /// exactly what `POST …/devices` takes as JSON (``RegistrationFields``: token, oldToken, channels, environment and
    /// the installation fields, `user` included — the operator holding the configuration needs no `userAuth`).
    /// Blank lines and `#` comments are skipped. Batches of `batchSize` lines are validated completely before
    /// anything is written and then written in one transaction; a batch with an invalid line writes nothing, and
    /// every invalid line is reported with its number and the field it names.
    ///
    /// With `webPush` (the app's host policy: `tokens import --service webpush`) every line is a Web Push
    /// registration, `{"subscription": …, …installation fields…}` (`"service": "webpush"` implied), judged exactly as
    /// the API judges one.
    public func importRegistrations(
        app: String, lines: some Sequence<String>, defaultEnvironment: APNsEnvironment, batchSize: Int = 10_000,
        webPush: WebPushHostPolicy? = nil
    ) throws(StoreError) -> ImportReport {
        var batches = ImportBatches<RegistrationRequest>(size: batchSize)
        return try batches.importLines(lines) { (text) throws(ImportLineError) in
            do throws(FieldError) {
                let json: JSONValue
                do { json = try JSONValue(parsing: String(text)) } catch {
                    throw FieldError(field: "json", message: "not a JSON object: \(error)")
                }
                var line = json
                if webPush != nil, let pairs = json.objectPairs {
                    if let given = json["service"], given != .string(PushService.webpush.rawValue) {
                        throw FieldError(field: "service", message: "service must be webpush (or left out) with --service webpush")
                    }
                    if json["service"] == nil { line = .object([("service", .string(PushService.webpush.rawValue))] + pairs) }
                }
                let fields = try RegistrationFields.parse(json: line, webPush: webPush)
                if fields.userAuth != nil {
                    throw FieldError(field: "userAuth", message: "userAuth is for apps; an import names users directly")
                }
                return fields.request(app: app, defaultEnvironment: defaultEnvironment)
            } catch {
                throw ImportLineError(message: error.message)
            }
        } write: { (requests) throws(StoreError) in
            for result in registerBatch(requests) {
                if case .failure(let error) = result { throw error }
            }
        }
    }
}
