// swift-tools-version:6.1
// PushProvider: a self-hosted push provider for APNs, Web Push and FCM. See README.md.
import PackageDescription

/// The git commit being built, from `$PUSHPROVIDER_COMMIT` (the Makefile sets it from `git rev-parse HEAD`), else
/// "unknown". Read from the environment because SwiftPM caches this manifest by its environment, not by the
/// repository's HEAD (`Context.gitInformation` stays at the commit of the first build). Only hex digits and
/// `-dirty` pass, so the value is a safe C string literal.
let buildCommit: String = {
    let text = Context.environment["PUSHPROVIDER_COMMIT"] ?? ""
    let hex = text.hasSuffix("-dirty") ? String(text.dropLast(6)) : text
    let valid = (7...64).contains(hex.count) && hex.allSatisfy { "0123456789abcdef".contains($0) }
    return valid ? text : "unknown"
}()

/// Testing enabled on this package's own modules (`-enable-testing`, which `@testable import` needs) when
/// `$PUSHPROVIDER_TESTABLE` is 1. The Makefile sets it for every build it makes — the tests' and `make release`'s —
/// so one optimised compile serves both: the tests run in release mode against the very objects `pushctl` is linked
/// from (docs/testing.md, "One compile", measures what it costs the product). Never set for an app that depends on
/// this package for PushProviderClient: SwiftPM refuses unsafe flags in a dependency, and the app needs none.
let testable = Context.environment["PUSHPROVIDER_TESTABLE"] == "1"
let ownSettings: [SwiftSetting] = testable ? [.unsafeFlags(["-enable-testing"])] : []
/// The test targets themselves are not optimised in that build (`-Onone` after SwiftPM's `-O`): they are never part
/// of the product, what they test is the optimised modules, and optimising ~60,000 lines of test code took minutes
/// of every CI run's compile.
let testSettings: [SwiftSetting] = testable ? [.unsafeFlags(["-Onone"])] : []

let package = Package(
    name: "PushProvider",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "pushctl", targets: ["pushctl"]),
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "PushStore", targets: ["PushStore"]),
        .library(name: "PushSender", targets: ["PushSender"]),
        .library(name: "PushDelivery", targets: ["PushDelivery"]),
        .library(name: "PushSimulator", targets: ["PushSimulator"]),
        .library(name: "PushServer", targets: ["PushServer"]),
        // The app side: what an iOS, macOS or Linux app adds by this repository's URL (README "In your app").
        .library(name: "PushProviderClient", targets: ["PushProviderClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Without the ConfigurationSupport trait (on by default): nothing here reads swift-configuration, and it is a
        // module the one compile would build for nothing.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Pure core: tokens, payloads, requests, APNs reasons, configuration. No I/O, no C.
        .target(name: "PushCore", swiftSettings: ownSettings),

        // The process's ways to run blocking work off Swift's cooperative pool: bounded lanes of threads for short
        // blocking calls (the store's, credentials, channel management), the end of a dedicated thread awaited
        // without parking one, and thread names the OS shows. Foundation only.
        .target(name: "PushLanes", swiftSettings: ownSettings),

        // The one reader of secret files (.p12, .p8, password files, VAPID keys, service accounts, the proxy's,
        // webhooks' and PostgreSQL's secrets): open, fstat the opened file, the mode rule, a size cap, the first-line
        // rule. Its own target because every reader lives in a different one (PushSender, PushStore, pushctl) and
        // PushCore must stay free of I/O; not PushLanes, which is about threads, not files. Glibc only, no C library.
        .target(name: "PushSecrets", swiftSettings: ownSettings),

        // The app-side client library: Foundation only (FoundationNetworking on Linux), no dependency at all, so an
        // app that adds it compiles none of the server's modules (Tests/client/consumer.sh checks a consumer's build).
        .target(name: "PushProviderClient", swiftSettings: ownSettings),

        // The commit the binary was built from (`pushctl --version`); see `buildCommit` above.
        .target(name: "CBuildInfo", cSettings: [.define("PUSHPROVIDER_COMMIT", to: "\"\(buildCommit)\"")]),

        // System libraries. CSQLite is imported by PushStore/SQLite/SQLite.swift alone; CCurl by PushSender/Curl.swift
        // and COpenSSL by PushSender/OpenSSL.swift, plus PushSender/LinkedLibraries.swift, which asks both loaded
        // libraries their versions.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),

        // The device registry, broadcast state and delivery log: SQLite (embedded default) and PostgreSQL
        // (several processes on several hosts), behind the same protocols.
        .target(
            name: "PushStore",
            dependencies: [
                "PushCore", "PushLanes", "PushSecrets", "CSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256: a Web Push device's key (DeviceKey).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: ownSettings),

        // HTTP/2 to APNs over libcurl's multi interface; .p12 (OpenSSL) and .p8 credentials.
        .target(
            name: "PushSender",
            dependencies: [
                "PushCore", "PushLanes", "PushSecrets", "CCurl", "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA PKCS#1 v1.5 (RS256) for FCM's OAuth 2.0 service-account assertion.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: ownSettings),

        // The delivery engine: broadcasts, send jobs, leases, checkpoints, outcome commits. Storage only through
        // PushCore's DeliveryStore protocol, the push services only through its DeliverySender, webhooks through its
        // WebhookPoster: the engine links no transport (no PushSender, libcurl or OpenSSL).
        .target(
            name: "PushDelivery",
            dependencies: [
                "PushCore", "PushLanes",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: ownSettings),

        // A strict APNs simulator: HTTP/2 over TLS with client-certificate or JWT auth and faults.
        .target(
            name: "PushSimulator",
            dependencies: [
                "PushCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 (RSA PKCS#1 v1.5) for the OAuth token endpoint's service-account assertions.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: ownSettings),

        // The HTTP API: token registration, send jobs, health and metrics.
        .target(
            name: "PushServer",
            dependencies: [
                "PushCore", "PushLanes", "PushStore", "PushSender", "PushDelivery",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: ownSettings),

        // The command-line tool: argument parsing and wiring only.
        .executableTarget(
            name: "pushctl",
            dependencies: [
                "PushCore", "PushLanes", "PushSecrets", "PushStore", "PushSender", "PushDelivery", "PushSimulator", "PushServer",
                "CBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: ownSettings),

        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"], swiftSettings: testSettings),
        .testTarget(name: "PushSecretsTests", dependencies: ["PushSecrets", "TestSupport"], swiftSettings: testSettings),
        // Test support, one target for every test target: the built pushctl and how to run a program
        // (BuiltPushctl, ProcessRunner), test tokens, and a real PostgreSQL server started once per test process
        // (PostgresTestServer).
        .target(name: "TestSupport", dependencies: ["PushCore"], path: "Tests/TestSupport", swiftSettings: testSettings),
        .testTarget(name: "PushStoreTests", dependencies: ["PushStore", "PushCore", "TestSupport"], swiftSettings: testSettings),
        .testTarget(name: "PushSimulatorTests", dependencies: ["PushSimulator", "PushSender", "PushCore", "TestSupport"], swiftSettings: testSettings),
        .testTarget(name: "PushSenderTests", dependencies: ["PushSender", "PushLanes", "PushSimulator", "PushCore", "TestSupport"], swiftSettings: testSettings),
        // The engine's tests run on a fake service behind its seam: no sender, no simulator, no TLS.
        .testTarget(
            name: "PushDeliveryTests",
            dependencies: ["PushDelivery", "PushStore", "PushCore", "CSQLite", "TestSupport"],
            swiftSettings: testSettings),
        // The send path end to end: the engine through the real senders to the simulator, where the engine's
        // promises depend on the sender's (faults, stream limits, stops with requests on the wire, breakers).
        .testTarget(
            name: "SendPathTests",
            dependencies: [
                "PushDelivery", "PushSender", "PushStore", "PushSimulator", "PushCore", "TestSupport",
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: testSettings),
        .testTarget(
            name: "PushServerTests",
            dependencies: [
                "PushServer", "PushStore", "PushSender", "PushDelivery", "PushSimulator", "PushCore", "CSQLite",
                "TestSupport",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings),
        .testTarget(name: "pushctlTests", dependencies: ["PushCore", "PushStore", "TestSupport"], swiftSettings: testSettings),
        // The client against a real `pushctl serve` (SQLite and PostgreSQL) over sockets.
        // Hummingbird only for a test's front server (ThrottlingFront); an app's build never sees a test target.
        .testTarget(
            name: "PushProviderClientTests",
            dependencies: [
                "PushProviderClient", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSettings),
    ]
)
