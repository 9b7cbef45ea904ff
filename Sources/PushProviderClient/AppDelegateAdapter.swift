#if canImport(UIKit)
import Foundation
import UIKit

/// The UIKit side, kept to a few lines over the tested core (no machine that builds this repository compiles it:
/// Linux has no UIKit). Call these from the app delegate's APNs callbacks.
extension Installation {
    /// For `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`: takes the token's bytes (never
    /// `"\(deviceToken)"`) and saves in the background; a change the server cannot take now waits on disk.
    public nonisolated func didRegisterForRemoteNotifications(withDeviceToken deviceToken: Data) {
        Task {
            await self.setDeviceToken(deviceToken)
            _ = try? await self.save()
        }
    }

    /// The installation id from `UIDevice.identifierForVendor`, for `init(configuration:installationId:)`.
    @MainActor public static var vendorInstallationId: String? {
        UIDevice.current.identifierForVendor?.uuidString
    }
}
#endif
