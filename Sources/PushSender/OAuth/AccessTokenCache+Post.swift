import PushLanes

extension AccessTokenCache {
    /// One grant from an OAuth 2.0 token endpoint: `POST url` with the form body `body`, TLS verified (`caFile` only
    /// adds trust anchors, e.g. the simulator's CA), HTTP/2 or HTTP/1.1, redirects not followed, through the app's
    /// proxy route, on the process's blocking lane (never on Swift's cooperative pool). Every service whose sender
    /// holds an access token (FCM's JWT-bearer grant, Huawei's client credentials) posts its grant here.
    /// - Throws: ``CredentialError`` when the endpoint refuses (naming its `error_description`) or answers without
    ///   a token; ``TransportError`` when there is no answer.
    public static func postGrant(
        url: String, body: [UInt8], caFile: String? = nil, proxy: SenderProxy? = nil, timeoutMs: Int = 10_000
    ) async throws -> Grant {
        let result = await BlockingLane.shared.perform { () -> Result<BlockingResponse, TransportError> in
            do throws(TransportError) {
                let request = try BlockingRequest(
                    method: "POST", url: url,
                    headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json", "Expect:"],
                    body: body, timeoutMs: timeoutMs, connectTimeoutMs: min(timeoutMs, 10_000), caFile: caFile, identity: nil,
                    connectTo: nil, route: ProxyRoute(url: url, configured: proxy, environment: .process),
                    requireHTTP2: false)
                return .success(try request.perform())
            } catch {
                return .failure(error)
            }
        }
        guard let result else { throw TransportError(code: -1, message: "too many blocking calls are waiting in this process") }
        let response = try result.get()
        return try Grant(status: response.status, body: response.body, tokenURI: url)
    }
}
