import PushCore

/// Label values for the Prometheus text `/metrics` writes itself: bounded and escaped.
///
/// A delivery's stored reason is Apple's reason string, or, for a notification that never got an answer, the
/// transport's error text (curl's message, with host names, ports and OpenSSL codes in it). As a label that
/// text made a new series for every distinct message and, with a quote or a newline in it, broke the
/// exposition format. Reasons are therefore reduced to Apple's set plus two classes, and every value is
/// escaped as the format requires.
enum MetricLabels {
    /// The `reason` label of a delivery with HTTP `status` and stored `reason` (see
    /// ``APNsReason/label(status:reason:)``: the counters store it already reduced, except rows counted from the
    /// log by older versions).
    static func reason(status: Int, reason: String?) -> String { APNsReason.label(status: status, reason: reason) }

    /// `value` escaped for a label: backslash, double quote and newline (the exposition format's rules).
    static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") })
        else { return value }
        var out = ""
        out.reserveCapacity(value.utf8.count + 8)
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
