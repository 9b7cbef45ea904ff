import PushCore

/// How the sender talks to one APNs endpoint. Every default follows Apple's guidance or a measured limit.
public struct SenderConfiguration: Sendable {
    /// HTTP/2 connections per endpoint (`apps.ID.connections`), each with its own curl multi handle and
    /// thread; notifications go to them in turn. Default 1: on a short link one connection and one curl thread
    /// already saturate a core. Over a long round trip one connection caps near 1000 streams ÷ RTT, so more
    /// connections send more; the in-flight window grows with them (``inFlightLimit``).
    public var connections: Int
    /// Streams per connection we allow (`CURLMOPT_MAX_CONCURRENT_STREAMS`); the server's SETTINGS still
    /// rule. Default 1000 (curl's own default of 100 would cap throughput).
    public var maxConcurrentStreams: Int
    /// Notifications in flight or waiting for a retry at once, per connection: bounds memory for any batch size.
    /// Default 500. Each costs a libcurl handle and its job (~22 KB resident, measured), so 500 keeps a
    /// broadcast under 64 MB; on loopback 500, 1000 and 2000 sent at the same rate. Over a long link the
    /// window must cover rate × round-trip time (500 at 50 ms RTT allows 10,000/s): raise it per app with
    /// `apps.ID.window`.
    public var window: Int
    /// TCP + TLS connect timeout. Default 10 s; never longer than the outage limit (see
    /// ``connectAttemptTimeoutMs``).
    public var connectTimeoutMs: Int
    /// The connect timeout a connection uses: ``connectTimeoutMs``, cut to the outage limit (at least 1 s), so
    /// one attempt at an endpoint that never answers cannot outlast the limit the run was given.
    public var connectAttemptTimeoutMs: Int { min(connectTimeoutMs, max(1000, outageLimitMs)) }
    /// How long a request may go unanswered once it is on a connection (counted by the transport from libcurl's
    /// pre-request callback, not `CURLOPT_TIMEOUT_MS`), so a silent server cannot hang a send. Default 30 s.
    public var requestTimeoutMs: Int
    /// APNs answers per notification before it is deferred: the first answer plus retries after 429, 500,
    /// 503 and the like. Default 5. Connection failures do not count.
    public var maxAttempts: Int
    /// Attempts lost with their connection (reset, GOAWAY, stream error, request timeout) before a notification
    /// is deferred; guards against one request that never gets an answer on a working connection. Default 10.
    public var maxDroppedAttempts: Int
    /// How long APNs may stay unreachable before the endpoint stops and the run is interrupted. While it is,
    /// notifications wait (in the window) and one probe reconnects with backoff. Default 10 minutes
    /// (`apps.ID.outageLimitSeconds`, `--outage-limit`).
    public var outageLimitMs: Int
    /// Reconnect probes after n failed connects wait uniform in [0, min(cap, base · 2^(n-1))]. Default base 250 ms.
    public var reconnectBaseMs: Int
    /// Largest reconnect delay. Default 30 s.
    public var reconnectCapMs: Int
    /// Backoff before retry n is uniform in [0, min(cap, base · 2^(n-1))] (full jitter). Default base 1 s.
    public var backoffBaseMs: Int
    /// Upper bound of one backoff delay. Default 60 s.
    public var backoffCapMs: Int
    /// The longest `Retry-After` a 429/503 answer is waited out for (the wait is at least the header's, see
    /// ``BackoffPolicy/delayMs(failedAttempts:random:retryAfterMs:limitMs:)``); an answer asking for longer defers
    /// the notification at once instead of holding its window slot. Default 5 minutes: well past any backoff
    /// (``backoffCapMs``), short enough that one answer cannot stall a run for longer than an outage would.
    public var maxRetryAfterMs: Int = 300_000
    /// How often idle connections are PINGed (`CURLOPT_UPKEEP_INTERVAL_MS` + `curl_easy_upkeep`). Default 60 s.
    public var upkeepIntervalMs: Int
    /// Pruning breaker: this many BadDeviceToken answers in a row trip it. Default 50.
    public var breakerConsecutive: Int
    /// Pruning breaker: this share of BadDeviceToken among ≥ ``breakerMinimumAnswers`` answers trips it.
    /// Default 0.2.
    public var breakerRatio: Double
    /// Pruning breaker: answers needed before the ratio rule applies. Default 100.
    public var breakerMinimumAnswers: Int
    /// curl's verbose trace on stderr (debugging only: it shows request headers, a proxy's
    /// `Proxy-Authorization` among them). Default false.
    public var verbose: Bool
    /// The outbound HTTP proxy (`proxy`, `apps.ID.proxy`), or nil: then the environment's proxy variables apply
    /// (``proxyEnvironment``). Set by ``APNsSender/forApp(_:in:settings:breakerStates:logger:)``.
    public var proxy: SenderProxy? = nil
    /// The proxy variables (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, …) the route of each connection is decided
    /// by when ``proxy`` is nil (``ProxyRoute``). Default: this process's environment, read when the
    /// configuration is made; tests pass their own.
    public var proxyEnvironment: ProxyEnvironment = .process

    /// Creates a configuration with the documented defaults.
    public init(
        connections: Int = 1, maxConcurrentStreams: Int = 1000, window: Int = 500,
        connectTimeoutMs: Int = 10_000, requestTimeoutMs: Int = 30_000, maxAttempts: Int = 5,
        maxDroppedAttempts: Int = 10, outageLimitMs: Int = 600_000, reconnectBaseMs: Int = 250,
        reconnectCapMs: Int = 30_000, backoffBaseMs: Int = 1000, backoffCapMs: Int = 60_000,
        upkeepIntervalMs: Int = 60_000, breakerConsecutive: Int = 50, breakerRatio: Double = 0.2,
        breakerMinimumAnswers: Int = 100, verbose: Bool = false
    ) {
        self.connections = max(1, connections)
        self.maxConcurrentStreams = min(max(1, maxConcurrentStreams), 1000)
        self.window = max(1, window)
        self.connectTimeoutMs = connectTimeoutMs
        self.requestTimeoutMs = requestTimeoutMs
        self.maxAttempts = max(1, maxAttempts)
        self.maxDroppedAttempts = max(1, maxDroppedAttempts)
        self.outageLimitMs = max(0, outageLimitMs)
        self.reconnectBaseMs = max(1, reconnectBaseMs)
        self.reconnectCapMs = max(1, reconnectCapMs)
        self.backoffBaseMs = backoffBaseMs
        self.backoffCapMs = backoffCapMs
        self.upkeepIntervalMs = upkeepIntervalMs
        self.breakerConsecutive = breakerConsecutive
        self.breakerRatio = breakerRatio
        self.breakerMinimumAnswers = breakerMinimumAnswers
        self.verbose = verbose
    }

    /// Notifications a run keeps in flight or uncommitted at once: ``window`` per connection.
    public var inFlightLimit: Int { window * connections }
}

/// One HTTPS endpoint: host, port and an optional extra CA file (verification always on).
public struct SenderTarget: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address; must match the server certificate.
    public var host: String
    /// TCP port.
    public var port: Int
    /// PEM CA bundle (`CURLOPT_CAINFO`), or nil for the system store.
    public var caFile: String?
    /// Connect to this IP address instead of resolving `host` (`CURLOPT_CONNECT_TO`); the certificate
    /// must still match `host`. Default nil.
    public var address: String?

    /// Hashes the host and port only (targets that differ only in their CA file or address are rare): the sender
    /// looks its endpoint up by target for every notification and every answer.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
    }

    /// Creates a target.
    public init(host: String, port: Int, caFile: String? = nil, address: String? = nil) {
        self.host = host
        self.port = port
        self.caFile = caFile
        self.address = address
    }

    /// Apple's production endpoint.
    public static let appleProduction = SenderTarget(host: "api.push.apple.com", port: 443)
    /// Apple's sandbox endpoint.
    public static let appleDevelopment = SenderTarget(host: "api.sandbox.push.apple.com", port: 443)

    /// The target an app's configured endpoint names (the simulator trusts `<certificates>/ca.pem`).
    public static func forEndpoint(_ endpoint: APNsEndpoint, caFile: String?, simulator: SimulatorSettings?) -> SenderTarget {
        switch endpoint {
        case .production: return SenderTarget(host: appleProduction.host, port: 443, caFile: caFile)
        case .development: return SenderTarget(host: appleDevelopment.host, port: 443, caFile: caFile)
        case .url(let host, let port): return SenderTarget(host: host, port: port, caFile: caFile)
        case .simulator:
            let sim = simulator ?? SimulatorSettings(certificates: ".")
            let host = sim.host == "0.0.0.0" ? "127.0.0.1" : sim.host
            return SenderTarget(host: host, port: sim.port, caFile: caFile ?? sim.certificates + "/ca.pem")
        }
    }

    /// `https://host:port`.
    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "https://\(h):\(port)"
    }
}
