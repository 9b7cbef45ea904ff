import PushCore
import PushLanes

/// UnifiedPush's discovery (SERV_1.2.0): before a server stores an endpoint a client gave it, a `GET` on the endpoint
/// must answer `{"unifiedpush":{"version":1}}`. It proves the URL is a distributor's push resource and not some other
/// service the client wants this server to poke (request forgery), with the address rule applied on the connection
/// itself (``UnifiedPushHostPolicy/refusal(address:for:)``: a public name that resolves to 127.0.0.1 is refused here).
///
/// Bounded so that a hostile endpoint costs little: a short timeout (``timeoutMs``), redirects never followed (a
/// 3xx is an answer that is not UnifiedPush's), the body read at most ``maximumBody`` bytes.
public enum UnifiedPushDiscovery {
    /// The whole request's limit, connection included.
    public static let timeoutMs = 5_000
    /// The most of an answer's body that is judged; the discovery document is 29 bytes.
    public static let maximumBody = 4_096

    /// What discovery found.
    public enum Outcome: Sendable, Equatable {
        /// The endpoint answered as a UnifiedPush push resource.
        case unifiedPush
        /// A definite answer that is not UnifiedPush's (a status, a redirect, another body), or an address refused:
        /// the registration is refused (400), and why.
        case refused(String)
        /// No answer (timeout, connection or TLS failure): the registration may be retried (503), and why.
        case unreachable(String)
    }

    /// Asks `endpoint` on the process's blocking lane.
    public static func run(
        _ endpoint: WebPushEndpoint, policy: UnifiedPushHostPolicy, caFile: String?, proxy: SenderProxy?,
        timeoutMs: Int = timeoutMs
    ) async -> Outcome {
        let check = AddressCheck { address in
            policy.refusal(address: address, for: endpoint).map {
                "\(endpoint.authority) resolved to \(address), which is \($0); list the host or its network in apps.ID.unifiedpush.exemptHosts to allow it"
            }
        }
        let answer = await BlockingLane.shared.perform { () -> Result<BlockingResponse, TransportError> in
            do throws(TransportError) {
                let request = try BlockingRequest(
                    method: "GET", url: endpoint.url, headers: ["Accept: application/json"], body: [], timeoutMs: timeoutMs,
                    connectTimeoutMs: timeoutMs, caFile: caFile, identity: nil, connectTo: nil,
                    route: ProxyRoute(host: endpoint.host, configured: proxy, environment: .process), requireHTTP2: false,
                    addressCheck: check)
                return .success(try request.perform())
            } catch {
                return .failure(error)
            }
        }
        switch answer ?? .failure(TransportError(code: 0, message: "not asked: too many blocking calls waiting")) {
        case .success(let response):
            return judge(status: response.status, body: response.body)
        case .failure(let error) where error.code == TransportError.addressRefused("").code:
            return .refused(error.message)
        case .failure(let error):
            return .unreachable("\(endpoint.origin) did not answer discovery: \(error.message)")
        }
    }

    /// The rule for an answer: 200 with a JSON object whose `unifiedpush.version` is 1 (other members allowed, as
    /// the spec's JSON may grow). Pure, so the rule is tested without a network.
    public static func judge(status: Int, body: [UInt8]) -> Outcome {
        if (300...399).contains(status) {
            return .refused("the endpoint answered discovery with a redirect (\(status)), which is never followed")
        }
        guard status == 200 else { return .refused("the endpoint answered discovery with HTTP \(status), not a UnifiedPush push resource") }
        guard body.count <= maximumBody, let json = try? JSONValue(parsing: body),
              json["unifiedpush"]?["version"] == .int(1)
        else {
            return .refused("the endpoint's discovery answer is not {\"unifiedpush\":{\"version\":1}}: not a UnifiedPush distributor")
        }
        return .unifiedPush
    }
}
