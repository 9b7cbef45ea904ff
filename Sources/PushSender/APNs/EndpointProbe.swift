import Foundation
import PushCore
import PushLanes

/// What one request to an app's APNs endpoint showed (`pushctl doctor`): whether TLS to it verifies with the
/// trust the sender uses (the system's store, or the app's `caFile`), which root the chain ends at, and the
/// endpoint's clock (its HTTP `Date` header). The request is a notification to an all-zero token, which no device
/// has, with the app's client certificate when it has one and no provider token: any HTTP answer (400
/// BadDeviceToken, 403) proves the endpoint reachable.
public struct EndpointProbe: Sendable, Equatable {
    /// `https://host:port`.
    public var target: String
    /// What verified the server: `the system trust store` or `caFile PATH`.
    public var trust: String
    /// The HTTP status of the answer, or nil when none came.
    public var status: Int?
    /// The endpoint's `Date` header, or nil when it sent none.
    public var serverDate: Date?
    /// The root the presented chain ends at: the last certificate's issuer (its subject when it is self-signed).
    public var root: String?
    /// Why no answer came (TLS verification, connection), or nil.
    public var error: String?
    /// libcurl's code of ``error`` (60: the certificate did not verify), or nil.
    public var errorCode: Int?

    /// Sends the probe to `apns`, the APNs service of `app` (whose proxy it uses), on the process's blocking lane
    /// (never on Swift's pool); at most `timeoutMs`.
    public static func run(
        _ apns: APNsSettings, of app: AppSettings, in configuration: PushConfiguration, timeoutMs: Int = 10_000
    ) async -> EndpointProbe {
        let target = SenderTarget.forEndpoint(apns.endpoint, caFile: apns.caFile, simulator: configuration.simulator)
        // The simulator and some proxies want the client certificate in the handshake (APNs takes it when offered).
        let identity = (try? makeCredentials(for: apns))?.tlsIdentity
        let proxy = try? configuration.proxy(for: app).map { try SenderProxy($0) }
        let url = "\(target.description)/3/device/\(String(repeating: "0", count: 64))"
        var probe = EndpointProbe(
            target: target.description, trust: target.caFile.map { "caFile \($0)" } ?? "the system trust store")
        let lines = ["apns-topic: \(apns.topic)", "apns-push-type: alert", "content-type: application/json"]
        let answer = await BlockingLane.shared.perform { () -> Result<(BlockingResponse, [[String]]), TransportError> in
            do throws(TransportError) {
                let request = try BlockingRequest(
                    method: "POST", url: url, headers: lines, body: Array(#"{"aps":{"alert":"pushctl doctor"}}"#.utf8),
                    timeoutMs: timeoutMs, connectTimeoutMs: timeoutMs, caFile: target.caFile, identity: identity,
                    connectTo: target.address.map { "\(target.host):\(target.port):\($0):\(target.port)" },
                    route: ProxyRoute(host: target.host, configured: proxy, environment: .process), certificateInfo: true)
                let response = try request.perform()
                return .success((response, request.certificateChain))
            } catch {
                return .failure(error)
            }
        }
        switch answer ?? .failure(TransportError(code: 0, message: "not sent: too many blocking calls waiting")) {
        case .success(let (response, chain)):
            probe.status = response.status
            probe.serverDate = response.headers["date"].flatMap(Self.httpDate)
            probe.root = Self.root(of: chain)
        case .failure(let error):
            probe.error = error.message
            probe.errorCode = error.code
        }
        return probe
    }

    /// Creates a probe result.
    public init(target: String, trust: String, status: Int? = nil, serverDate: Date? = nil, root: String? = nil,
                error: String? = nil, errorCode: Int? = nil) {
        self.target = target
        self.trust = trust
        self.status = status
        self.serverDate = serverDate
        self.root = root
        self.error = error
        self.errorCode = errorCode
    }

    /// The last certificate's issuer, or its subject when self-signed: the root the store had to hold.
    static func root(of chain: [[String]]) -> String? {
        guard let last = chain.last else { return nil }
        func field(_ name: String) -> String? {
            last.first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) }
        }
        return field("Issuer") ?? field("Subject")
    }

    /// An RFC 9110 `Date` (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
