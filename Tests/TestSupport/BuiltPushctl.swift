import Foundation

/// The built `pushctl` the tests run, found one way for every test target: next to the test bundle (the same build
/// configuration), or one directory up, else `<package root>/.build/debug/pushctl`.
public enum BuiltPushctl {
    /// The package root (two levels above this file's directory).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The binary.
    public static let url: URL = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for dir in [beside, beside.deletingLastPathComponent(), bundle] {
            let candidate = dir.appendingPathComponent("pushctl")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug/pushctl")
    }()

    /// ``url``'s path.
    public static var path: String { url.path }

    /// True when the binary is there (a test that needs it says so rather than failing obscurely).
    public static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: path) }
}
