import Foundation
import PushProviderClient
import Testing

/// ``DirectoryStateStore``: one file, replaced atomically, read back by the next launch; a damaged file is a typed
/// error, not a silent fresh start that would register the device as a new installation.
@Suite struct DirectoryStateStoreTests {
    @Test func aStateIsReadBackAndEachWriteReplacesTheFileWithNothingLeftBeside() throws {
        let dir = InstallationTests.stateDirectory().appendingPathComponent("nested")
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = DirectoryStateStore(directory: dir)
        #expect(try store.load() == nil)
        try store.store(Data("one".utf8))
        try store.store(Data("two".utf8))
        #expect(try store.load() == Data("two".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["installation.json"])
    }

    @Test func aDamagedStateIsTheTypedErrorStateUnreadable() async throws {
        let dir = InstallationTests.stateDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = DirectoryStateStore(directory: dir)
        try store.store(Data(#"{"version": 1, "installationId": "#.utf8))  // cut short, as by a disk gone bad
        let configuration = ClientConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, app: "example", registrationKey: "k")
        #expect {
            _ = try Installation(configuration: configuration, stateStore: store, facts: DeviceFacts())
        } throws: { ($0 as? PushProviderClientError)?.code == "state_unreadable" }

        // A state from a newer library is refused too, rather than misread.
        try store.store(Data(#"{"version": 99, "installationId": "x", "desired": {"channels": [], "tags": {}}, "outbox": []}"#.utf8))
        #expect {
            _ = try Installation(configuration: configuration, stateStore: store, facts: DeviceFacts())
        } throws: { ($0 as? PushProviderClientError)?.code == "state_unreadable" }
    }
}
