/// Who may attach a user to a device. Registration keys ship inside apps, so anyone holding one could otherwise
/// claim `user: "42"` on their own phone and receive user 42's notifications. A registration names a user only
/// with proof: a send key (the app's backend registering for it), or `userAuth` =
/// lowercase hex HMAC-SHA256(user id) under the app's `userSecret`, which the app's backend computes and hands
/// to its logged-in user — as hosted push services do for external user ids. The secret never leaves the
/// backend and PushProvider; the proof is per user, so it cannot be replayed for another one.
public enum UserAuth {
    /// The longest user id, in bytes.
    public static let maximumUserLength = 128

    /// A user id: 1–128 characters of `A-Z a-z 0-9 . _ : @ + -` — safe in a URL path (`…/users/{user}`), in logs
    /// and in the HMAC's message without any encoding question.
    public static func validUser(_ text: String) throws(FieldError) -> String {
        guard let problem = userProblem(text) else { return text }
        throw FieldError(field: "user", message: problem)
    }

    /// Why `text` is not a user id, or nil.
    public static func userProblem(_ text: String) -> String? {
        let ok = !text.isEmpty && text.utf8.count <= maximumUserLength && text.utf8.allSatisfy { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                 UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
        return ok ? nil : "user must be 1-\(maximumUserLength) characters of A-Z a-z 0-9 . _ : @ + -"
    }

    /// The proof for `user` under `secret`: lowercase hex of `mac(secret, user's UTF-8 bytes)`, where `mac` is
    /// HMAC-SHA256 (PushSender's, on OpenSSL: PushCore does no cryptography of its own).
    public static func proof(user: String, secret: [UInt8], mac: ([UInt8], [UInt8]) -> [UInt8]) -> String {
        hex(mac(secret, Array(user.utf8)))
    }

    /// True when `userAuth` is the proof for `user` (hex in either case), compared in constant time so the
    /// answer's timing does not tell how much of a guess was right.
    public static func verify(userAuth: String, user: String, secret: [UInt8], mac: ([UInt8], [UInt8]) -> [UInt8]) -> Bool {
        let expected = Array(proof(user: user, secret: secret, mac: mac).utf8)
        let given = Array(userAuth.lowercased().utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(given, expected) { difference |= a ^ b }
        return difference == 0
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
