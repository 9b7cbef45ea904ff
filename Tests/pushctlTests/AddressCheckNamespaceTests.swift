import Foundation
import PushCore
import PushStore
import Testing
import TestSupport

/// The server-side request forgery check under the proxy variables, with the real binary in a network namespace of
/// its own (`unshare --net --mount`): a private `/etc/hosts` maps an allowed default push host,
/// updates.push.services.mozilla.com, to 127.0.0.1, where a listener on port 443 logs every connection. A
/// subscription on that host is registered, and `pushctl send` runs once per set of proxy variables.
@Suite(.timeLimit(.minutes(2))) struct AddressCheckNamespaceTests {
    typealias World = BroadcastCommandTests.World
    static let host = "updates.push.services.mozilla.com"

    /// Every direct connection is judged whatever the proxy variables say (`NO_PROXY` naming the host, an empty
    /// `HTTPS_PROXY`, `no_proxy=*`, `ALL_PROXY` with `NO_PROXY`): each send is refused by name and no byte reaches
    /// the listener. `ALL_PROXY` alone is a proxy (nothing listens there: the send fails, the listener still sees
    /// nothing). The control: with the host listed exactly in the config (the operator's decision to send there) the
    /// same send does reach the listener — so the check, not the namespace, is what kept it away.
    @Test func anAllowedHostResolvingToLoopbackIsRefusedWhateverTheProxyVariablesAndNoByteReachesIt() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false, webPush: true)
        defer { w.stop() }
        let endpoint = "https://\(Self.host)/wpush/v2/ssrf-probe"
        let publicKey = try String(contentsOf: w.dir.appendingPathComponent("vapid.pub"), encoding: .utf8)
        // The VAPID public key is a P-256 point: a valid p256dh for a subscription nobody will decrypt.
        let line = #"{"subscription":{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(publicKey)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}}"#
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "webpush", "-"], stdin: line + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        let token = DeviceKey.webPush(endpointURL: endpoint).hex

        let exact = w.dir.appendingPathComponent("exact.json").path
        let text = try String(contentsOfFile: w.config, encoding: .utf8)
        let listed = text.replacingOccurrences(of: #""allowedHosts": ["127.0.0.1:"#, with: #""allowedHosts": ["\#(Self.host)", "127.0.0.1:"#)
        #expect(listed != text)
        try listed.write(toFile: exact, atomically: true, encoding: .utf8)
        let cases = [
            "\(w.config) HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=\(Self.host)",
            "\(w.config) HTTPS_PROXY=",
            "\(w.config) https_proxy=http://127.0.0.1:9 no_proxy=*",
            "\(w.config) ALL_PROXY=http://127.0.0.1:9 NO_PROXY=example.org,\(Self.host)",
            "\(w.config) ALL_PROXY=http://127.0.0.1:9",
            "\(exact) HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=\(Self.host)",
        ]
        try (cases.joined(separator: "\n") + "\n").write(to: w.dir.appendingPathComponent("cases"), atomically: true, encoding: .utf8)
        let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/ssrf/netns-send.sh").path
        let run = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["--mount", "--net", "--kill-child", "bash", script, w.dir.path, CLI.binary.path, token, Self.host], timeout: 100)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")

        func result(_ n: Int) throws -> (status: String, output: String, connections: Int) {
            let read = { (suffix: String) in
                (try? String(contentsOf: w.dir.appendingPathComponent("case\(n).\(suffix)"), encoding: .utf8)) ?? ""
            }
            return (read("status").trimmingCharacters(in: .whitespacesAndNewlines), read("out") + read("err"),
                    Int(read("connections").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1)
        }
        let refusal = "\(Self.host) resolved to 127.0.0.1, which is a loopback address; refused"
        for n in 1...4 {
            let r = try result(n)
            #expect(r.status != "0" && r.status != "", "case \(n) \(cases[n - 1]): exit \(r.status)\n\(r.output)")
            #expect(r.output.contains(refusal), "case \(n) \(cases[n - 1]):\n\(r.output)")
            #expect(r.connections == 0, "case \(n) \(cases[n - 1]): the listener saw \(r.connections) connections")
        }
        let proxied = try result(5)
        #expect(proxied.status != "0" && !proxied.output.contains(refusal), "ALL_PROXY alone:\n\(proxied.output)")
        #expect(proxied.connections == 0)
        let control = try result(6)
        #expect(control.connections >= 1, "the exactly listed host was never connected to:\n\(control.output)")
    }

    /// UnifiedPush's hole: an endpoint accepted while its name resolved to a public address (imported here with
    /// `--skip-discovery`, as endpoints from an earlier server are), whose name now resolves to 127.0.0.1 (the
    /// namespace's /etc/hosts). Every distributor is allowed, so the address check alone keeps the sender away: the
    /// send is refused at connect, naming the address and the exemption, with and without proxy variables, and no
    /// byte reaches the listener. The control: the host exempted exactly (`exemptHosts`) reaches it.
    @Test func aUnifiedPushEndpointWhoseNameNowResolvesToLoopbackIsRefusedAtConnect() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false, unifiedPush: true)
        defer { w.stop() }
        let host = "up.example.net"
        let endpoint = "https://\(host)/up/ssrf-probe"
        let publicKey = try String(contentsOf: w.dir.appendingPathComponent("vapid.pub"), encoding: .utf8)
        let line = #"{"subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(publicKey)","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}}"#
        let imported = try await CLI.run(
            ["tokens", "import", "--config", w.config, "--app", "example", "--service", "unifiedpush", "--skip-discovery", "-"],
            stdin: line + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        let token = DeviceKey.unifiedPush(endpointURL: endpoint).hex

        let exact = w.dir.appendingPathComponent("exempt.json").path
        let text = try String(contentsOfFile: w.config, encoding: .utf8)
        let listed = text.replacingOccurrences(of: #""exemptHosts": ["127.0.0.1"]"#, with: #""exemptHosts": ["\#(host)", "127.0.0.1"]"#)
        #expect(listed != text)
        try listed.write(toFile: exact, atomically: true, encoding: .utf8)
        let cases = [
            "\(w.config)",
            "\(w.config) HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY=\(host)",
            "\(exact)",
        ]
        try (cases.joined(separator: "\n") + "\n").write(to: w.dir.appendingPathComponent("cases"), atomically: true, encoding: .utf8)
        let script = BuiltPushctl.packageRoot.appendingPathComponent("Tests/ssrf/netns-send.sh").path
        let run = try await ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["--mount", "--net", "--kill-child", "bash", script, w.dir.path, CLI.binary.path, token, host], timeout: 100)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        func result(_ n: Int) -> (status: String, output: String, connections: Int) {
            let read = { (suffix: String) in
                (try? String(contentsOf: w.dir.appendingPathComponent("case\(n).\(suffix)"), encoding: .utf8)) ?? ""
            }
            return (read("status").trimmingCharacters(in: .whitespacesAndNewlines), read("out") + read("err"),
                    Int(read("connections").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1)
        }
        let refusal = "\(host) resolved to 127.0.0.1, which is a loopback address; refused (server-side request forgery). List the host or its network in apps.ID.unifiedpush.exemptHosts"
        for n in 1...2 {
            let r = result(n)
            #expect(r.status != "0" && r.status != "", "case \(n) \(cases[n - 1]): exit \(r.status)\n\(r.output)")
            #expect(r.output.contains(refusal), "case \(n) \(cases[n - 1]):\n\(r.output)")
            #expect(r.connections == 0, "case \(n) \(cases[n - 1]): the listener saw \(r.connections) connections")
        }
        let control = result(3)
        #expect(control.connections >= 1, "the exempted host was never connected to:\n\(control.output)")
    }
}
