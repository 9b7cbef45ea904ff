import Foundation
import Testing
import TestSupport

/// `pushctl --version` (VersionReport) through the binary: the product version, which docs/openapi.yaml's
/// `info.version` repeats; the commit the build came from; and the libcurl, OpenSSL and SQLite it runs with.
@Suite(.timeLimit(.minutes(2))) struct VersionReportTests {
    /// `pkg-config --modversion NAME`: the system library's version, found independently of the binary.
    static func systemVersion(_ name: String) async throws -> String {
        let run = try await ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["pkg-config", "--modversion", name])
        guard run.status == 0 else { throw BroadcastCommandTests.Failure("pkg-config --modversion \(name): \(run.stderr)") }
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func versionPrintsTheVersionTheCommitAndTheLibrariesItRunsWith() async throws {
        let result = try await CLI.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(result.stdout)")
        guard lines.count == 5 else { return }

        // The version is docs/openapi.yaml's info.version, and semantic.
        let spec = try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
        let info = try #require(spec.firstMatch(of: /\ninfo:\n(?:  .*\n)*?  version: ([^\n]+)\n/), "no info.version")
        let documented = String(info.1).trimmingCharacters(in: .whitespaces)
        #expect(lines[0] == "pushctl \(documented)")
        #expect(documented.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil, "\(documented)")

        // The commit: the one make passed to the build (PUSHPROVIDER_COMMIT, which make test also gives this
        // test), else a build outside make, which says unknown.
        if let commit = ProcessInfo.processInfo.environment["PUSHPROVIDER_COMMIT"], !commit.isEmpty {
            #expect(lines[1] == "commit \(commit)")
        } else {
            #expect(lines[1] == "commit unknown" || lines[1].wholeMatch(of: /commit [0-9a-f]{7,64}(-dirty)?/) != nil, "\(lines[1])")
        }

        // The libraries, as the system has them (pkg-config reads the same Debian packages' .pc files).
        let curl = try await Self.systemVersion("libcurl")
        #expect(lines[2].hasPrefix("libcurl \(curl) ("), "\(lines[2]) vs \(curl)")
        #expect(lines[2].contains("OpenSSL/") && lines[2].contains("nghttp2/"), "\(lines[2])")
        let openssl = try await Self.systemVersion("openssl"), sqlite = try await Self.systemVersion("sqlite3")
        #expect(lines[3].hasPrefix("OpenSSL \(openssl) "), "\(lines[3])")
        #expect(lines[4] == "SQLite \(sqlite)")
    }

    @Test func helpListsTheVersionFlagAndPushctlAloneStillPrintsHelp() async throws {
        let help = try await CLI.run(["--help"])
        #expect(help.status == 0 && help.stdout.contains("--version"), "\(help.stdout)")
        let bare = try await CLI.run([])
        #expect(bare.status == 0 && bare.stdout.contains("SUBCOMMANDS"), "\(bare.stdout)\(bare.stderr)")
    }
}
