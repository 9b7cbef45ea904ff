/// Decides whether BadDeviceToken answers may delete tokens for one APNs endpoint: it trips when the answers
/// look like a sandbox/production mix-up (parse-server#4500) — `consecutive` BadDeviceToken in a row, or at
/// least `ratio` of at least `minimumAnswers` answers — and keeps every such token while tripped.
///
/// Its ``state`` is persisted per app and endpoint, so each run continues from the previous one's evidence:
/// - while not tripped, BadDeviceToken prunes are applied only once the endpoint is *confidently healthy*
///   (``isConfidentlyHealthy``); until then they are held, and discarded if that never happens;
/// - once tripped, the counts restart and the breaker heals itself when the answers since the trip are
///   confidently healthy (the operator fixed the endpoint), instead of staying tripped forever;
/// - counts are halved every ``decayAnswers`` answers, so old history cannot hide a new storm.
///
/// Pure value type; the owner serialises calls.
public struct PruningBreaker: Sendable, Equatable {
    /// What the store keeps between runs.
    public struct State: Sendable, Equatable {
        /// Answers counted (decayed).
        public var answers: Int
        /// BadDeviceToken answers among them.
        public var badDeviceTokens: Int
        /// BadDeviceToken answers in a row, most recent last.
        public var consecutive: Int
        /// True while BadDeviceToken tokens are kept.
        public var tripped: Bool

        /// Creates a state.
        public init(answers: Int = 0, badDeviceTokens: Int = 0, consecutive: Int = 0, tripped: Bool = false) {
            self.answers = answers
            self.badDeviceTokens = badDeviceTokens
            self.consecutive = consecutive
            self.tripped = tripped
        }
    }

    /// A change of mind caused by one answer.
    public enum Change: Sendable, Equatable {
        /// This answer tripped the breaker: keep BadDeviceToken tokens, drop held prunes.
        case tripped
        /// This answer made the endpoint confidently healthy: held prunes may be applied.
        case healthy
    }

    /// Answers after which all counts are halved.
    public static let decayAnswers = 10_000

    /// BadDeviceToken answers in a row that trip it.
    public let consecutiveLimit: Int
    /// The share of BadDeviceToken answers that trips it.
    public let ratio: Double
    /// Answers needed before the ratio rule (and health) apply.
    public let minimumAnswers: Int
    /// The persisted counts.
    public private(set) var state: State

    /// Creates a breaker, continuing from `state` when one was persisted.
    public init(consecutive: Int, ratio: Double, minimumAnswers: Int, state: State = State()) {
        consecutiveLimit = max(1, consecutive)
        self.ratio = ratio
        self.minimumAnswers = max(1, minimumAnswers)
        self.state = state
    }

    /// True while BadDeviceToken tokens are kept.
    public var tripped: Bool { state.tripped }
    /// Answers counted (decayed).
    public var answers: Int { state.answers }
    /// BadDeviceToken answers among them.
    public var badDeviceTokens: Int { state.badDeviceTokens }
    /// BadDeviceToken answers in a row.
    public var consecutive: Int { state.consecutive }

    /// Counts one HTTP answer from the endpoint and says whether it changed the verdict.
    public mutating func record(badDeviceToken: Bool) -> Change? {
        let wasHealthy = isConfidentlyHealthy
        state.answers += 1
        if badDeviceToken {
            state.badDeviceTokens += 1
            state.consecutive += 1
        } else {
            state.consecutive = 0
        }
        if state.answers >= Self.decayAnswers {
            state.answers /= 2
            state.badDeviceTokens /= 2
        }
        if state.tripped {
            // Heal once the answers since the trip are confidently healthy.
            guard hasHealthyEvidence else { return nil }
            state.tripped = false
            return .healthy
        }
        if state.consecutive >= consecutiveLimit
            || (state.answers >= minimumAnswers && Double(state.badDeviceTokens) >= ratio * Double(state.answers))
        {
            // Restart the counts: from now on they measure whether the endpoint has been fixed.
            state = State(answers: 0, badDeviceTokens: 0, consecutive: 0, tripped: true)
            return .tripped
        }
        return !wasHealthy && isConfidentlyHealthy ? .healthy : nil
    }

    /// What to do with the token of one token-dead answer.
    public enum Prune: Sendable, Equatable {
        /// Delete it: per-device evidence (not a suspect answer), or a suspect one while confidently healthy.
        case delete
        /// Keep it: the breaker is tripped.
        case keptByBreaker
        /// Hold the prune until the endpoint is confidently healthy (then delete) or the breaker trips or the run
        /// ends (then keep the token).
        case held
    }

    /// The one prune rule every sender applies to an answer: counts it (``record(badDeviceToken:)``, `suspect` being
    /// the answer a misconfigured endpoint would give for every token — APNs' BadDeviceToken, FCM's
    /// SENDER_ID_MISMATCH) and, when the answer says the token is dead, decides its prune. A token-dead answer that
    /// is not suspect is per-device evidence and always deleted. `prune` is nil when the answer is not token-dead;
    /// `change` says whether held prunes are now released (`.healthy`) or discarded (`.tripped`).
    public mutating func answer(tokenDead: Bool, suspect: Bool) -> (prune: Prune?, change: Change?) {
        let change = record(badDeviceToken: suspect)
        guard tokenDead else { return (nil, change) }
        if !suspect { return (.delete, change) }
        if tripped { return (.keptByBreaker, change) }
        if isConfidentlyHealthy { return (.delete, change) }
        return (.held, change)
    }

    /// What `change` does to the held prunes: `.healthy` releases them all, `.tripped` discards them all (their
    /// tokens are kept). Returns the released ones and how many were discarded.
    public static func settle<Held>(_ change: Change?, held: inout [Held]) -> (released: [Held], discarded: Int) {
        switch change {
        case .tripped:
            defer { held.removeAll() }
            return ([], held.count)
        case .healthy:
            defer { held.removeAll() }
            return (held, 0)
        case nil:
            return ([], 0)
        }
    }

    /// True when BadDeviceToken prunes can be applied: not tripped, enough answers, and well below both limits.
    public var isConfidentlyHealthy: Bool { !state.tripped && hasHealthyEvidence }

    private var hasHealthyEvidence: Bool {
        state.answers >= minimumAnswers && Double(state.badDeviceTokens) < ratio * Double(state.answers) / 2
            && state.consecutive < consecutiveLimit / 2
    }
}
