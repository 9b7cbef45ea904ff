import ArgumentParser
import Foundation
import PushSender

/// `pushctl webpush`: Web Push (RFC 8030) tools. So far: the VAPID key.
struct WebPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push tools: make the VAPID key a web app subscribes with.",
        subcommands: [Key.self, BenchCrypto.self])

    /// `pushctl webpush key …`.
    struct Key: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "key", abstract: "The VAPID key (RFC 8292) that identifies this server to push services.",
            subcommands: [New.self])
    }
}

extension WebPushCommand.Key {
    /// `pushctl webpush key new --out FILE`.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a VAPID key: a P-256 private key in PEM (mode 0600); print its public key.",
            discussion: """
                Refuses to overwrite FILE: browsers' subscriptions are bound to the key they were made with. \
                Prints the public key, base64url of its uncompressed point, the applicationServerKey a web app \
                passes to pushManager.subscribe().
                """)

        @OptionGroup var logging: LogOptions
        @Option(name: .long, help: "The PEM file to create (must not exist).")
        var out: String

        func run() throws {
            do {
                print(try VAPIDKeyFile.create(at: absolutePath(out)))
            } catch {
                throw CLIError.usage(error.message)
            }
        }
    }
}

extension WebPushCommand {
    /// Hidden: `webpush bench-crypto [--count N]` prints µs per operation of one message's cryptography
    /// (``WebPushCryptoBenchmark``), one `name<TAB>µs` line each; bench/bench_webpush.sh puts them in RESULTS.md.
    struct BenchCrypto: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench-crypto", abstract: "Benchmark Web Push message cryptography.", shouldDisplay: false)
        @Option(name: .long, help: "Times each operation runs.") var count = 2000

        func run() throws {
            for (name, microseconds) in try WebPushCryptoBenchmark.run(count: max(1, count)) {
                print(name + "\t" + String(format: "%.1f", microseconds))
            }
        }
    }
}
