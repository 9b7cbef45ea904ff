import Dispatch
import Foundation
import PushSecrets
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `SecretFileLoader` on real files: what it refuses (exposed modes, directories, FIFOs, missing and oversize files),
/// what it accepts (owner and group modes, symlinks to a good file), and the first-line rule.
@Suite(.timeLimit(.minutes(1))) struct SecretFileLoaderTests {
    /// A new directory with `secret` holding `contents` at `mode`.
    static func secret(_ contents: [UInt8] = Array("s3cret\n".utf8), mode: mode_t = 0o600, label: String = #function)
        throws -> (directory: String, path: String)
    {
        let directory = try TemporaryDirectories.make("secrets-" + label)
        let path = directory + "/secret"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents)))
        // Set after creating: the umask does not apply to chmod.
        #expect(chmod(path, mode) == 0)
        return (directory, path)
    }

    static func refusal(_ path: String, name: String = "apps.example.auth.p8") -> SecretFileError? {
        do { _ = try SecretFileLoader.read(path, name: name); return nil } catch { return error }
    }

    @Test(arguments: [0o644, 0o604, 0o606, 0o641, 0o601, 0o777])
    func aFileOtherUsersCanReachIsRefusedNamingTheKeyTheFileAndTheFix(mode: Int) throws {
        let (_, path) = try Self.secret(mode: mode_t(mode))
        let octal = "0" + String(mode, radix: 8)
        for error in [Self.refusal(path), Self.checkRefusal(path)] {
            #expect(error?.kind == .exposed)
            #expect(error?.message == "apps.example.auth.p8: \(path) is accessible by other users (mode \(octal)); "
                + "run chmod 600 \(path) (or chmod 640 to let the service's group read it)")
        }
    }

    @Test(arguments: [0o600, 0o640, 0o400, 0o660, 0o440])
    func aFileOnlyItsOwnerAndGroupCanReachIsReadWhole(mode: Int) throws {
        let (_, path) = try Self.secret(Array("line one\nline two\n".utf8), mode: mode_t(mode))
        #expect(try SecretFileLoader.read(path, name: "k") == Array("line one\nline two\n".utf8))
        try SecretFileLoader.check(path, name: "k")
    }

    @Test func aDirectoryIsRefusedAsNotARegularFileWhateverItsMode() throws {
        let directory = try TemporaryDirectories.make("secrets-directory")
        #expect(chmod(directory, 0o700) == 0)
        let error = Self.refusal(directory, name: "databasePasswordFile")
        #expect(error?.kind == .notRegularFile)
        #expect(error?.message == "databasePasswordFile: \(directory) is not a regular file (a directory)")
        #expect(Self.checkRefusal(directory)?.kind == .notRegularFile)
    }

    /// Before the loader, a FIFO at a secret's path blocked the reading thread until something wrote to it. The read
    /// runs on a thread of its own and is awaited with a deadline; a loader that blocked is unblocked by opening the
    /// FIFO for writing, so this test fails rather than hangs.
    @Test func aFIFOIsRefusedAtOnceInsteadOfBlockingUntilSomethingWritesToIt() async throws {
        let directory = try TemporaryDirectories.make("secrets-fifo")
        let fifo = directory + "/secret"
        try #require(mkfifo(fifo, 0o600) == 0)
        let outcome = Outcome()
        DispatchQueue.global().async {
            let result = Result { () throws(SecretFileError) in try SecretFileLoader.read(fifo, name: "apps.example.webhook.secretFile") }
            outcome.result.withLock { $0 = result }
        }
        do {
            try await waitUntil(deadline: .seconds(10), "the loader returns from a FIFO") { outcome.result.withLock { $0 != nil } }
        } catch {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            throw error
        }
        guard case .failure(let error)? = outcome.result.withLock({ $0 }) else {
            Issue.record("a FIFO was read as a secret")
            return
        }
        #expect(error.kind == .notRegularFile)
        #expect(error.message == "apps.example.webhook.secretFile: \(fifo) is not a regular file (a FIFO)")
        #expect(Self.checkRefusal(fifo)?.kind == .notRegularFile)
    }

    @Test func aMissingFileIsMissingNamingTheKeyAndTheFile() throws {
        let directory = try TemporaryDirectories.make("secrets-missing")
        let error = Self.refusal(directory + "/absent", name: "proxyCredentialsFile")
        #expect(error?.kind == .missing)
        #expect(error?.message == "proxyCredentialsFile: \(directory)/absent: no such file")
        #expect(error?.path == directory + "/absent")
        // A symlink to nothing is as missing as the file it names.
        try FileManager.default.createSymbolicLink(atPath: directory + "/dangling", withDestinationPath: directory + "/absent")
        #expect(Self.refusal(directory + "/dangling")?.kind == .missing)
    }

    @Test func aFileOverTheSizeLimitIsRefusedAndOneAtTheLimitIsRead() throws {
        let (_, path) = try Self.secret([], mode: 0o600)
        // Sparse: no megabyte is written to disk.
        #expect(truncate(path, off_t(SecretFileLoader.sizeLimit + 1)) == 0)
        let error = Self.refusal(path, name: "apps.example.fcm.serviceAccount")
        #expect(error?.kind == .tooLarge)
        #expect(error?.message == "apps.example.fcm.serviceAccount: \(path) is larger than 1048576 bytes, too large for a secret file")
        #expect(Self.checkRefusal(path)?.kind == .tooLarge)
        #expect(truncate(path, off_t(SecretFileLoader.sizeLimit)) == 0)
        #expect(try SecretFileLoader.read(path, name: "k").count == SecretFileLoader.sizeLimit)
    }

    /// A Kubernetes secret mount is a chain of symlinks (`key -> ..data/key`, `..data -> ..2026_12_02…`): the file
    /// reached is what is judged, never the link's own mode (always 0777).
    @Test func aSymlinkToAGoodFileIsReadAndOneToAnExposedFileIsRefused() throws {
        let (directory, path) = try Self.secret(Array("through a link\n".utf8), mode: 0o640)
        let link = directory + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(try SecretFileLoader.readFirstLine(link, name: "k") == "through a link")
        #expect(chmod(path, 0o644) == 0)
        let error = Self.refusal(link, name: "apps.example.auth.passwordFile")
        #expect(error?.kind == .exposed)
        #expect(error?.message.hasPrefix("apps.example.auth.passwordFile: \(link) is accessible by other users (mode 0644)") == true)
    }

    @Test(arguments: [
        ("pw\n", "pw"), ("pw\r\n", "pw"), ("pw", "pw"), ("pw\r", "pw"), ("\nsecond", ""), ("", ""), ("\r\n", ""),
        ("pw\nsecond\n", "pw"), ("pw\n\n", "pw"), (" pw \t\n", " pw \t"), ("pw\r\r\n", "pw\r"), ("pa:ss:word\n", "pa:ss:word"),
    ])
    func theFirstLineIsTheTextUpToTheFirstLineFeedLessOneCarriageReturn(contents: String, line: String) throws {
        #expect(Array(SecretFileLoader.firstLine(of: Array(contents.utf8))) == Array(line.utf8))
        let (_, path) = try Self.secret(Array(contents.utf8), label: "line")
        #expect(try SecretFileLoader.readFirstLine(path, name: "k") == line)
    }

    @Test func aFirstLineThatIsNotUTF8IsRefusedNamingTheFile() throws {
        let (_, path) = try Self.secret([0x70, 0xFF, 0x77, 0x0A])
        do {
            _ = try SecretFileLoader.readFirstLine(path, name: "apps.example.userSecretFile")
            Issue.record("not UTF-8, read as text")
        } catch {
            #expect(error.kind == .notText)
            #expect(error.message == "apps.example.userSecretFile: \(path) is not UTF-8 text")
        }
        // Only the first line is text: a binary second line is never looked at.
        let (_, binaryTail) = try Self.secret(Array("pw\n".utf8) + [0xFF, 0xFE], label: "tail")
        #expect(try SecretFileLoader.readFirstLine(binaryTail, name: "k") == "pw")
    }

    /// What the FIFO test's reading thread came back with.
    final class Outcome: Sendable {
        let result = Mutex<Result<[UInt8], SecretFileError>?>(nil)
    }

    static func checkRefusal(_ path: String) -> SecretFileError? {
        do { try SecretFileLoader.check(path, name: "apps.example.auth.p8"); return nil } catch { return error }
    }
}
