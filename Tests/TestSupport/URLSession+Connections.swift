import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// An ephemeral session with `connections` connections per host (the shared session allows 6): tests that send
    /// many requests at once, or probe a server while others are held up, give each group its own connections so
    /// nothing waits for a connection behind a slow request.
    public static func ephemeral(connectionsPerHost connections: Int, timeout: TimeInterval = 30) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = timeout
        return URLSession(configuration: configuration)
    }
}
