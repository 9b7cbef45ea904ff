/// A service's id headers, which the transport writes and reads without knowing the service: the request's own id
/// (written per request, in place), the id its answer echoes and a second id some answers add. APNs has all three
/// (`apns-id` out and back, `apns-unique-id` in its development environment); Web Push and FCM have none, and their
/// requests come prepared. Names are lower case, the answer names with their colon.
struct IdHeaders: Sendable {
    /// `name: ` of the request's id line.
    let request: StaticString
    /// `name:` of the answer's echo of it.
    let answer: StaticString
    /// `name:` of a second id in the answer, if the service sends one.
    let unique: StaticString?

    /// The first letter of either answer name: a header line starting otherwise is passed without comparing it.
    var answerInitial: UInt8 { answer.utf8Start.pointee }
}
