import PushCore
import PushLanes

/// `pushctl doctor`'s look at one push service host an app may send to: its name resolves to an address the app's
/// policy allows (the same check the sender makes on every connection: ``WebPushHostPolicy/refusal(address:for:)``),
/// the TLS handshake verifies (the system trust store, plus the app's `caFile`), and an HTTP answer comes. The request
/// is a `POST /` without a subscription, which no push service delivers: any status proves the host answers.
public struct WebPushHostProbe: Sendable, Equatable {
    /// `https://host[:port]`.
    public var target: String
    /// The HTTP status of the answer, or nil when none came.
    public var status: Int?
    /// Why no answer came (the address refused, TLS, connection), or nil.
    public var error: String?

    /// Probes `entry` (an exact host of `policy`) on the process's blocking lane, at most `timeoutMs`.
    public static func run(
        _ entry: WebPushHostPolicy.Entry, policy: WebPushHostPolicy, caFile: String?, proxy: SenderProxy?,
        timeoutMs: Int = 10_000
    ) async -> WebPushHostProbe {
        let authority = entry.description
        let target = "https://\(authority)"
        var probe = WebPushHostProbe(target: target)
        guard let endpoint = try? WebPushEndpoint(parsing: target + "/doctor", field: "host") else {
            probe.error = "\(authority) is not a host to probe"
            return probe
        }
        let check = AddressCheck { address in
            policy.refusal(address: address, for: endpoint).map { "\(authority) resolved to \(address), which is \($0)" }
        }
        let answer = await BlockingLane.shared.perform { () -> Result<BlockingResponse, TransportError> in
            do throws(TransportError) {
                let request = try BlockingRequest(
                    method: "POST", url: target + "/", headers: ["TTL: 0", "Expect:"], body: [], timeoutMs: timeoutMs,
                    connectTimeoutMs: timeoutMs, caFile: caFile, identity: nil, connectTo: nil,
                    route: ProxyRoute(host: endpoint.host, configured: proxy, environment: .process), requireHTTP2: false,
                    addressCheck: check)
                return .success(try request.perform())
            } catch {
                return .failure(error)
            }
        }
        switch answer ?? .failure(TransportError(code: 0, message: "not sent: too many blocking calls waiting")) {
        case .success(let response): probe.status = response.status
        case .failure(let error): probe.error = error.message
        }
        return probe
    }

    /// Creates a probe result.
    public init(target: String, status: Int? = nil, error: String? = nil) {
        self.target = target
        self.status = status
        self.error = error
    }
}
