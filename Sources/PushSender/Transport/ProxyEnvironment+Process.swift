import Foundation
import PushCore

extension ProxyEnvironment {
    /// This process's environment, read when called (a test or `serve` after a reload sees the current one).
    public static var process: ProxyEnvironment { ProxyEnvironment(ProcessInfo.processInfo.environment) }
}
