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
        var report = ImportReport()
        var requests: [RegistrationRequest] = []
        var invalid: [ImportReport.InvalidLine] = []
        var lineCount = 0
        func flush() throws(StoreError) {
            defer {
                requests.removeAll(keepingCapacity: true)
                invalid.removeAll()
                lineCount = 0
            }
            guard lineCount > 0 else { return }
            if !invalid.isEmpty {
                report.failedBatches += 1
                report.skippedValidLines += requests.count
                report.invalidCount += invalid.count
                report.invalid.append(contentsOf: invalid.prefix(max(0, 1000 - report.invalid.count)))
                return
            }
            for result in registerBatch(requests) {
                if case .failure(let error) = result { throw error }
            }
            report.imported += requests.count
            report.committedBatches += 1
        }
        var number = 0
        for line in lines {
            number += 1
            let text = Substring(line).drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            if text.isEmpty || text.first == "#" || text.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
            lineCount += 1
            do throws(InstallationError) {
                let json: JSONValue
                do { json = try JSONValue(parsing: String(text)) } catch {
                    throw InstallationError(field: "json", message: "not a JSON object: \(error)")
                }
                let fields = try RegistrationFields.parse(json: json)
                if fields.userAuth != nil {
                    throw InstallationError(field: "userAuth", message: "userAuth is for apps; an import names users directly")
                }
                requests.append(fields.request(app: app, defaultEnvironment: defaultEnvironment))
            } catch {
                invalid.append(.init(line: number, message: error.message))
            }
            if lineCount == max(1, batchSize) { try flush() }
        }
        try flush()
        return report
    }
}
