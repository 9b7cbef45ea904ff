import Foundation
import PushCore

extension ConfigurationEnvironment {
    /// This process's `PUSHCTL_` overrides, relative paths against its current directory: what every command that
    /// reads the configuration applies (one place, so `serve`, its reload, `worker` and `doctor` agree).
    static var ofProcess: ConfigurationEnvironment {
        ConfigurationEnvironment(ProcessInfo.processInfo.environment, workingDirectory: FileManager.default.currentDirectoryPath)
    }
}
