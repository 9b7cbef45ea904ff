import Foundation
import NIOCore

/// The server could not listen on its address (port taken, address not on this host, no permission): one line
/// naming the address and the system's reason, e.g. `cannot listen on 127.0.0.1:8080: Address already in use
/// (errno 98)`.
public struct ListenError: Error, Sendable, CustomStringConvertible {
    /// The address asked for.
    public let host: String
    /// The port asked for.
    public let port: Int
    /// The system's reason.
    public let reason: String

    /// The error for a failed bind of `host:port`.
    init(host: String, port: Int, _ error: IOError) {
        self.host = host
        self.port = port
        let text = String(cString: strerror(error.errnoCode))
        reason = "\(text) (errno \(error.errnoCode))"
    }

    /// `cannot listen on HOST:PORT: REASON`.
    public var description: String { "cannot listen on \(host):\(port): \(reason)" }
}
