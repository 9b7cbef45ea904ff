/// Which APNs environment the device's token belongs to: `development` for builds signed for development (Xcode
/// runs), `production` for TestFlight and the App Store. Sent so the server delivers through the right host.
public enum APNsEnvironment: String, Sendable, Codable, Hashable {
    case development
    case production
}
