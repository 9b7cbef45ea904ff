/// What a registration asks for one optional installation field: a field left out of the request keeps the
/// stored value (and an old token's value carries over to its replacement); `null` clears it; a value sets it.
/// Apps send only what they know at each launch, so "absent" must never mean "erase".
public enum FieldUpdate<Value: Sendable & Equatable>: Sendable, Equatable {
    /// Left out: keep what is stored (or carry the replaced token's value over).
    case keep
    /// `null`: clear it.
    case clear
    /// A new value.
    case set(Value)

    /// The value after the update: the request's, else the device's own, else the replaced token's.
    public func resolved(existing: Value?, replaced: Value?) -> Value? {
        switch self {
        case .keep: return existing ?? replaced
        case .clear: return nil
        case .set(let value): return value
        }
    }

    /// True unless the field was left out.
    public var isGiven: Bool {
        if case .keep = self { return false }
        return true
    }

    /// The value set, if any.
    public var value: Value? {
        if case .set(let value) = self { return value }
        return nil
    }
}
