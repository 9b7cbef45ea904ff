import Foundation

/// A position in the delivery log's newest-first order: the finish time and the row id of the last row of a
/// page. Handed to clients as an opaque string (``encoded``); the next page holds the rows strictly before it.
public struct DeliveryCursor: Sendable, Equatable {
    /// The last row's finish time (ms since 1970).
    public var finishedMs: Int64
    /// The last row's id.
    public var id: Int64

    /// Creates a cursor.
    public init(finishedMs: Int64, id: Int64) {
        self.finishedMs = finishedMs
        self.id = id
    }

    /// The form handed out: `<finishedMs>.<id>` (clients pass it back as is; `docs/openapi.yaml` gives its
    /// pattern, so a well-formed one is a position in the history, issued or not).
    public var encoded: String { "\(finishedMs).\(id)" }

    /// Parses ``encoded``; nil for anything else.
    public init?(encoded text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        func digits(_ s: Substring) -> Bool { (1...18).contains(s.utf8.count) && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard parts.count == 2, digits(parts[0]), digits(parts[1]), parts[1].first != "0",
            let finished = Int64(parts[0]), let id = Int64(parts[1])
        else { return nil }
        self.init(finishedMs: finished, id: id)
    }
}
