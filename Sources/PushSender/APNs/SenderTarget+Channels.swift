import PushCore

extension SenderTarget {
    /// Apple's production channel-management host.
    public static let appleChannelsProduction = SenderTarget(host: "api-manage-broadcast.push.apple.com", port: 2196)
    /// Apple's sandbox channel-management host.
    public static let appleChannelsDevelopment = SenderTarget(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)

    /// Where channel management (`/1/apps/…`) goes for a request in `environment`: Apple's management host of
    /// that environment for `production` / `development`, else the simulator or URL the endpoint names.
    public static func channelManagement(
        _ endpoint: APNsEndpoint, environment: APNsEnvironment, caFile: String?, simulator: SimulatorSettings?
    ) -> SenderTarget {
        switch endpoint {
        case .production, .development:
            let apple = environment == .production ? appleChannelsProduction : appleChannelsDevelopment
            return SenderTarget(host: apple.host, port: apple.port, caFile: caFile)
        case .simulator, .url:
            return forEndpoint(endpoint, caFile: caFile, simulator: simulator)
        }
    }

    /// Where broadcast sends (`/4/broadcasts/apps/…`) go for a request in `environment`: Apple's push host of
    /// that environment for `production` / `development`, else the simulator or URL the endpoint names.
    public static func broadcast(
        _ endpoint: APNsEndpoint, environment: APNsEnvironment, caFile: String?, simulator: SimulatorSettings?
    ) -> SenderTarget {
        switch endpoint {
        case .production, .development:
            return forEndpoint(environment == .production ? .production : .development, caFile: caFile, simulator: nil)
        case .simulator, .url:
            return forEndpoint(endpoint, caFile: caFile, simulator: simulator)
        }
    }
}
