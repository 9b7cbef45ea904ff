/// Stops BadDeviceToken pruning for an endpoint when the answers look like a sandbox/production mix-up
/// (parse-server#4500): `consecutive` BadDeviceToken in a row, or ≥ `ratio` of ≥ `minimumAnswers` answers.
/// Once tripped it stays tripped for the run. Not thread-safe: the owner serialises calls.
struct PruningBreaker {
    let consecutiveLimit: Int
    let ratio: Double
    let minimumAnswers: Int
    private(set) var answers = 0
    private(set) var badDeviceTokens = 0
    private(set) var consecutive = 0
    private(set) var tripped = false

    init(consecutive: Int, ratio: Double, minimumAnswers: Int) {
        consecutiveLimit = consecutive
        self.ratio = ratio
        self.minimumAnswers = minimumAnswers
    }

    /// Counts one HTTP answer; returns true when this answer tripped the breaker.
    mutating func record(badDeviceToken: Bool) -> Bool {
        answers += 1
        if badDeviceToken {
            badDeviceTokens += 1
            consecutive += 1
        } else {
            consecutive = 0
        }
        guard !tripped else { return false }
        if consecutive >= consecutiveLimit
            || (answers >= minimumAnswers && Double(badDeviceTokens) >= ratio * Double(answers)) {
            tripped = true
            return true
        }
        return false
    }

    /// True when BadDeviceToken prunes held back so far can be applied: enough answers, and healthy.
    var isConfidentlyHealthy: Bool {
        !tripped && answers >= minimumAnswers && Double(badDeviceTokens) < ratio * Double(answers) / 2
            && consecutive < consecutiveLimit / 2
    }
}
