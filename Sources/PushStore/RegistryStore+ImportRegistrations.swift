import PushCore

extension RegistryStore {
    /// Imports registrations given as JSON lines (`tokens import --format jsonl`): one registration object per line,
    /// exactly what `POST …/devices` takes as JSON (``RegistrationFields``: token, oldToken, channels, environment and
    /// the installation fields, `user` included — the operator holding the configuration needs no `userAuth`).
    /// Blank lines and `#` comments are skipped. Batches of `batchSize` lines are validated completely before
    /// anything is written and then written in one transaction; a batch with an invalid line writes nothing, and
    /// every invalid line is reported with its number and the field it names.
    public func importRegistrations(
        app: String, lines: some Sequence<String>, defaultEnvironment: APNsEnvironment, batchSize: Int = 10_000
    ) throws(StoreError) -> ImportReport {
        var batches = ImportBatches<RegistrationRequest>(size: batchSize)
        return try batches.importLines(lines) { (text) throws(ImportLineError) in
            do throws(FieldError) {
                let json: JSONValue
                do { json = try JSONValue(parsing: String(text)) } catch {
                    throw FieldError(field: "json", message: "not a JSON object: \(error)")
                }
                let fields = try RegistrationFields.parse(json: json)
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
