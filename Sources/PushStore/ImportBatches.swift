import PushCore

/// The batching both imports share (`tokens import`, plain and JSON lines): lines become items in batches of
/// `size` non-blank lines; a batch is validated completely before anything is written, so a batch with an invalid
/// line writes nothing and reports every invalid line with its number, while a valid batch is written in one
/// transaction. The import then goes on with the next batch; a crash mid-import leaves only whole batches.
struct ImportBatches<Item> {
    private(set) var report = ImportReport()
    private var items: [Item] = []
    private var invalid: [ImportReport.InvalidLine] = []
    private var lineCount = 0  // non-blank lines in the current batch
    private let size: Int

    init(size: Int) {
        self.size = max(1, size)
        items.reserveCapacity(self.size)
    }

    /// Feeds every line: blank lines and `#` comments are skipped; `parse` gets the line without surrounding
    /// whitespace and returns its item or throws the message to report for it; `write` writes one valid batch in
    /// one transaction.
    mutating func importLines(
        _ lines: some Sequence<String>, parse: (Substring) throws(ImportLineError) -> Item,
        write: ([Item]) throws(StoreError) -> Void
    ) throws(StoreError) -> ImportReport {
        var number = 0
        for line in lines {
            number += 1
            let text = Substring(line).trimmingASCIIWhitespaceAndNewlines()
            if text.isEmpty || text.first == "#" { continue }
            lineCount += 1
            do throws(ImportLineError) {
                items.append(try parse(text))
            } catch {
                invalid.append(.init(line: number, message: error.message))
            }
            if lineCount == size { try flush(write) }
        }
        try flush(write)
        return report
    }

    private mutating func flush(_ write: ([Item]) throws(StoreError) -> Void) throws(StoreError) {
        defer {
            items.removeAll(keepingCapacity: true)
            invalid.removeAll()
            lineCount = 0
        }
        guard lineCount > 0 else { return }
        if !invalid.isEmpty {
            report.failedBatches += 1
            report.skippedValidLines += items.count
            report.invalidCount += invalid.count
            report.invalid.append(contentsOf: invalid.prefix(max(0, 1000 - report.invalid.count)))
            return
        }
        try write(items)
        report.imported += items.count
        report.committedBatches += 1
    }
}

/// Why one import line was rejected (reported with its line number).
struct ImportLineError: Error {
    var message: String
}

extension Substring {
    fileprivate func trimmingASCIIWhitespaceAndNewlines() -> Substring {
        var s = self
        while let f = s.utf8.first, f == 0x20 || f == 0x09 || f == 0x0a || f == 0x0d { s = s.dropFirst() }
        while let l = s.utf8.last, l == 0x20 || l == 0x09 || l == 0x0a || l == 0x0d { s = s.dropLast() }
        return s
    }
}
