import PushCore

/// What the built-in simulator received, for the development inbox (`GET /v1/apps/{app}/inbox`, the console's Inbox
/// tab): the thing Mailpit is for e-mail — a developer sees each notification as the service got it, without a phone.
/// `pushctl serve` passes its built-in simulator; a server without one has no inbox (the route answers 404).
public protocol DevelopmentInbox: Sendable {
    /// The newest entries of every service, newest first, at most `limit`.
    func inbox(limit: Int) -> [InboxEntry]
    /// How many entries are kept at most (older ones are dropped first).
    var inboxCapacity: Int { get }
}
