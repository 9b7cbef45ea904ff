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

    /// The opaque form: base64url (no padding) of `d1:<finishedMs>:<id>`.
    public var encoded: String {
        Data("d1:\(finishedMs):\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Parses ``encoded``; nil for anything else.
    public init?(encoded text: String) {
        guard !text.isEmpty, text.count <= 64,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "d1", let finished = Int64(parts[1]), let id = Int64(parts[2]), id > 0 else {
            return nil
        }
        self.init(finishedMs: finished, id: id)
    }
}
