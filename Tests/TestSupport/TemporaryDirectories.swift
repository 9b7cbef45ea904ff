import Foundation
import Synchronization

/// Temporary directories the tests make, each removed when the test process exits (whether or not its test
/// removed it first): processes a test started in the background, or a store a test still holds open, may write
/// into it until they end. Every name starts with `pushctl-test-`, which `Tests/leftovers/leftovers.sh` checks
/// nothing leaves behind. (Swift Testing has no hook after the last test, and a directory left by every run filled
/// /tmp.)
public enum TemporaryDirectories {
    private static let made = Mutex<[String]>([])
    private static let cleanUpAtExit: Void = {
        atexit {
            for path in TemporaryDirectories.made.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
    }()

    /// A new empty directory `pushctl-test-LABEL-UUID` in TMPDIR (LABEL keeps letters and digits only).
    public static func make(_ label: String) throws -> String {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        let path = NSTemporaryDirectory() + "pushctl-test-\(safe)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        remember(path)
        return path
    }

    /// Removes `path` when the process exits.
    public static func remember(_ path: String) {
        _ = cleanUpAtExit
        made.withLock { $0.append(path) }
    }
}
