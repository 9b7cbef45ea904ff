import PushCore

/// The `date` header of the simulator's answers (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), formatted
/// with integer arithmetic (PushCore's ``CivilDate``): it is written on every answer, on the hot path.
enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `seconds` after 1970 (UTC).
    static func format(seconds: Int64) -> String {
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - day * 86_400
        let date = CivilDate(daysSinceEpoch: day)
        let weekday = days[Int(((day % 7) + 7) % 7)]
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(weekday), \(two(Int64(date.day))) \(months[date.month - 1]) \(date.year) "
            + "\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }
}
