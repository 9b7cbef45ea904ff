import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// The registry shared by several pushctl processes, and killed mid-write.
@Suite struct RegistryProcessTests {
    @Test(.timeLimit(.minutes(2)))
    func twoProcessesImportWhileAStreamRuns() async throws {
        let directory = makeTempDirectory()
        let (config, database) = writeConfig(in: directory)
        let perProcess = 20_000
        var files: [String] = []
        for p in 0..<2 {
            let file = directory + "/tokens\(p).txt"
            let lines = (0..<perProcess).map { testToken($0, salt: UInt64(p + 1)).hex }.joined(separator: "\n")
            _ = FileManager.default.createFile(atPath: file, contents: Data(lines.utf8))
            files.append(file)
        }
        let registry = try SQLiteRegistry(path: database)
        // Small batches: 100 write transactions per process, interleaving with each other and with us.
        let processes = try files.map {
            try PushctlProcess(["tokens", "import", "--app", "example", "--batch-size", "200", $0], config: config)
        }
        var passes = 0
        var inProcess = 0
        while processes.contains(where: { $0.process.isRunning }) || passes == 0 {
            var previous = ""
            var streamed = 0
            try blocking {
                try registry.forEachBatch(app: "example", batchSize: 500) { batch in
                    for device in batch {
                        #expect(device.token.hex > previous)  // strictly increasing: keyset order holds under writes
                        previous = device.token.hex
                    }
                    streamed += batch.count
                }
            }
            #expect(streamed <= 2 * perProcess + inProcess)
            let token = testToken(passes, salt: 99)
            _ = try await registry.run { _ in try registry.register(app: "example", token: token) }
            inProcess += 1
            passes += 1
        }
        for process in processes {
            let result = await process.wait()
            #expect(result.status == 0, "pushctl failed: \(result.stderr)")
            #expect(!result.stderr.contains("locked"))
            #expect(result.stdout.contains("imported \(perProcess) tokens"))
        }
        let total = 2 * perProcess + inProcess
        #expect(try await registry.run { _ in try registry.count(app: "example") } == total)
        #expect(try await registry.run { _ in try registry.integrityCheck() } == "ok")
    }

    @Test(.timeLimit(.minutes(2)))
    func killDuringImportLeavesOnlyWholeBatches() async throws {
        let directory = makeTempDirectory()
        let (config, database) = writeConfig(in: directory)
        let total = 300_000, batch = 2_000
        let file = directory + "/tokens.txt"
        let lines = (0..<total).map { testToken($0).hex }.joined(separator: "\n")
        _ = FileManager.default.createFile(atPath: file, contents: Data(lines.utf8))
        let registry = try SQLiteRegistry(path: database)
        let process = try PushctlProcess(
            ["tokens", "import", "--app", "example", "--batch-size", "\(batch)", file], config: config)
        // Watch and kill from a thread of its own: on the cooperative pool, under a loaded full test run, the
        // watcher was not scheduled again until the import had finished.
        let killedWhileRunning = try await withCheckedThrowingContinuation { (c: CheckedContinuation<Bool, Error>) in
            Thread.detachNewThread {
                do {
                    let deadline = Date().addingTimeInterval(30)
                    while try registry.count(app: "example") < 2 * batch, process.process.isRunning, Date() < deadline {
                        usleep(2000)
                    }
                    let running = process.process.isRunning
                    process.process.send(SIGKILL)
                    c.resume(returning: running)
                } catch {
                    c.resume(throwing: error)
                }
            }
        }
        let result = await process.wait()
        #expect(killedWhileRunning, "the import finished before it could be killed")
        #expect(result.status != 0)
        let reopened = try SQLiteRegistry(path: database)
        #expect(try await reopened.run { _ in try reopened.integrityCheck() } == "ok")
        let count = try await reopened.run { _ in try reopened.count(app: "example") }
        #expect(count >= 2 * batch && count < total)
        #expect(count % batch == 0, "partial batch: \(count) rows")
        // Every committed row is a whole prefix batch of the file, in file order.
        let committed = Set((0..<count).map { testToken($0).hex })
        var stored = 0
        try blocking {
            try reopened.export(app: "example") { hex in
                #expect(committed.contains(hex))
                stored += 1
            }
        }
        #expect(stored == count)
    }
}
