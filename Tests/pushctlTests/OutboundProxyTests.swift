import Foundation
import PushCore
import Testing

/// `pushctl send` to a `pushctl simulator` process through a real HTTP proxy (tinyproxy): the config's `proxy`,
/// an app's own, proxy credentials, and `HTTPS_PROXY` / `NO_PROXY` when the config names none. Every test that
/// expects the proxy to be used checks tinyproxy's log for the CONNECT to the simulator.
@Suite(.timeLimit(.minutes(2))) struct OutboundProxyTests {
    typealias World = BroadcastCommandTests.World
    static let proxyVariables: Set<String> = ["HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"]

    /// Rewrites the world's config with extra top-level and app keys (JSON members, each ending in a comma).
    func writeConfig(_ w: World, top: String = "", app: String = "") throws {
        try """
            {"database": "registry.sqlite", \(top)
             "simulator": {"host": "127.0.0.1", "port": \(w.port), "certificates": "certs"},
             "apps": {"example": {\(app) "topic": "com.example.app", "endpoint": "simulator",
               "auth": {"p12": "certs/client.p12", "passwordFile": "certs/client.p12.password"}}}}
            """.write(toFile: w.config, atomically: true, encoding: .utf8)
    }

    func send(_ w: World, environment: [String: String] = [:]) async throws -> CLI.Result {
        try await CLI.run(
            ["send", "--config", w.config, "--app", "example", "--token", World.token(0), "--alert", "via proxy",
             "--outage-limit", "20"],
            environment: environment, unset: Self.proxyVariables.subtracting(environment.keys))
    }

    /// Stops the simulator (flushing its record) and returns the tokens it accepted.
    func received(_ w: inout World) throws -> [String] {
        w.stopSimulator()
        return try w.received()
    }

    @Test func theConfiguredProxyCarriesTheNotificationInACONNECTTunnelEvenForNoProxyHosts() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        try writeConfig(w, top: #""proxy": "\#(proxy.url)","#)
        // NO_PROXY does not override a proxy the configuration names.
        let r = try await send(w, environment: ["NO_PROXY": "127.0.0.1,localhost"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connects(to: w.port).count >= 1, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])
    }

    @Test func anAppsProxyOverridesTheGlobalOne() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        let nothing = try BroadcastCommandTests.freePort()  // nobody listens there
        try writeConfig(w, top: #""proxy": "http://127.0.0.1:\#(nothing)","#, app: #""proxy": "\#(proxy.url)","#)
        let r = try await send(w)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connects(to: w.port).count >= 1, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])
    }

    @Test func aProxyThatWantsCredentialsGetsThemFromTheFileAndWithoutThemTheSendFailsWith407() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let secret = "pr0xy-s3cret-\(UInt32.random(in: 0...UInt32.max))"
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port, basicAuth: ("pushuser", secret))
        defer { proxy.stop() }

        try writeConfig(w, top: #""proxy": "\#(proxy.url)","#)
        let refused = try await send(w)
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("refused the CONNECT tunnel: HTTP 407"), "\(refused.stderr)")
        #expect(refused.stderr.contains(proxy.url), "\(refused.stderr)")
        #expect(!refused.stdout.contains(" 200 "))

        try writeConfig(w, top: #""proxy": "\#(proxy.url)", "proxyCredentialsEnv": "TEST_PROXY_CREDENTIALS","#)
        let wrong = try await send(w, environment: ["TEST_PROXY_CREDENTIALS": "pushuser:not-\(secret)"])
        #expect(wrong.status == 3, "\(wrong.stderr)")
        // tinyproxy answers wrong credentials with 401, missing ones with 407.
        #expect(wrong.stderr.contains("refused the CONNECT tunnel: HTTP 401"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("check proxyCredentialsFile / proxyCredentialsEnv"), "\(wrong.stderr)")
        #expect(!(wrong.stdout + wrong.stderr).contains(secret))

        let file = w.dir.appendingPathComponent("proxy.credentials").path
        #expect(FileManager.default.createFile(
            atPath: file, contents: Data("pushuser:\(secret)\n".utf8), attributes: [.posixPermissions: 0o600]))
        try writeConfig(w, top: #""proxy": "\#(proxy.url)", "proxyCredentialsFile": "proxy.credentials","#)
        let accepted = try await send(w)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(!(accepted.stdout + accepted.stderr).contains(secret))
        #expect(proxy.connects(to: w.port).count >= 3, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])  // only the run with the right credentials got through
    }

    @Test func httpsProxyFromTheEnvironmentIsUsedWhenTheConfigNamesNone() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        let r = try await send(w, environment: ["HTTPS_PROXY": proxy.url])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connects(to: w.port).count >= 1, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])
    }

    /// `ALL_PROXY` is the fallback for every scheme, as libcurl reads it (``ProxyEnvironment``): we decide the route
    /// and hand it to libcurl, so it is counted as a proxy like `HTTPS_PROXY`; an empty `HTTPS_PROXY` does not hide it.
    @Test func allProxyFromTheEnvironmentIsUsedWhenTheConfigAndHttpsProxyNameNone() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        let r = try await send(w, environment: ["ALL_PROXY": proxy.url, "HTTPS_PROXY": ""])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connects(to: w.port).count >= 1, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])
    }

    @Test func noProxyFromTheEnvironmentBypassesTheEnvironmentsProxy() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        let r = try await send(w, environment: ["HTTPS_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connects(to: w.port).isEmpty, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w) == [World.token(0)])
    }

    @Test func theSimulatorsCertificateIsStillVerifiedInsideTheTunnel() async throws {
        var w = try await World.make(tokens: 1)
        defer { w.stop() }
        let other = w.dir.appendingPathComponent("other").path
        let made = try await CLI.run(["cert", "make-dev", "--out", other, "--topic", "com.example.app"])
        #expect(made.status == 0, "\(made.stderr)")
        let proxy = try await Tinyproxy.start(in: w.dir, connectPort: w.port)
        defer { proxy.stop() }
        // Trusting another CA than the one that signed the simulator's certificate: the tunnel opens, TLS fails.
        try writeConfig(w, top: #""proxy": "\#(proxy.url)","#, app: #""caFile": "other/ca.pem","#)
        let r = try await send(w)
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("TLS with https://127.0.0.1:\(w.port) failed"), "\(r.stderr)")
        #expect(proxy.connects(to: w.port).count >= 1, "tinyproxy log:\n\(proxy.log)")
        #expect(try received(&w).isEmpty)
    }

    @Test func aProxyURLWithCredentialsInItIsAConfigurationErrorThatDoesNotQuoteThem() async throws {
        var w = try await World.make(tokens: 1, startSimulator: false)
        defer { w.stop() }
        try writeConfig(w, top: #""proxy": "http://pushuser:hunter2@127.0.0.1:3128","#)
        let r = try await send(w)
        #expect(r.status == 2)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("config.proxy: put no credentials in the URL; use proxyCredentialsFile or proxyCredentialsEnv"), "\(r.stderr)")
        #expect(!r.stderr.contains("hunter2"))
    }
}
