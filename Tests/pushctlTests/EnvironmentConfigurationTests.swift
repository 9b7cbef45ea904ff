import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PushCore
import Testing
import TestSupport

/// `PUSHCTL_` variables override the configuration file's per-deployment keys in the running binary, as a container
/// sets them (docs/configuration.md, "From the environment"): `serve` listens, stores and sends where they say,
/// `doctor` reports them by name, and a secret given by value is refused naming the file-path form.
@Suite(.timeLimit(.minutes(2))) struct EnvironmentConfigurationTests {
    typealias World = BroadcastCommandTests.World

    @Test func serveListensStoresAndSendsWhereTheEnvironmentSaysOverTheFile() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        // The file names a simulator port nothing listens on, the file-side registry and the .p8 where it no longer
        // is: the app can only work through the variables.
        let config = try ServeCommandTests.sideBySideConfig(in: w, simulatorPort: 1)
        let secrets = w.dir.appendingPathComponent("mounted-secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let p8 = secrets.appendingPathComponent("apns-key.p8").path
        try FileManager.default.moveItem(atPath: w.dir.appendingPathComponent("certs/AuthKey_DEVKEY1234.p8").path, toPath: p8)
        let database = w.dir.appendingPathComponent("from-the-environment.sqlite").path
        var environment = [
            "PUSHCTL_DATABASE": database, "PUSHCTL_SERVER_PORT": "0", "PUSHCTL_ADMIN_HOST": "127.0.0.2", "PUSHCTL_ADMIN_PORT": "0",
            "PUSHCTL_APP_EXAMPLE_LIVE_APNS_P8": p8,
        ]
        var started: CLI.Background?
        for _ in 1...5 {
            environment["PUSHCTL_SIMULATOR_PORT"] = String(try BroadcastCommandTests.freePort())
            let serve = try CLI.startCapturing(["serve", "--config", config], environment: environment)
            try await waitUntil(deadline: .seconds(60), "serve's banner") {
                !serve.isRunning || serve.stdoutText.contains("Send it a notification")
            }
            started = serve
            guard !serve.isRunning, serve.stderrText.contains("Address already in use") else { break }
        }
        let serve = try #require(started)
        defer { serve.stop() }
        let banner = serve.stdoutText
        #expect(serve.isRunning, "\(banner)\n\(serve.stderrText)")
        let api = "http://127.0.0.1:\(try ServeCommandTests.bannerPort(banner, after: "PushProvider is listening on http://127.0.0.1:"))"
        let admin = try ServeCommandTests.bannerPort(banner, after: "(API), admin on http://127.0.0.2:")
        #expect(try await ServeCommandTests.status(of: "http://127.0.0.2:\(admin)/metrics") == 200)
        #expect(banner.contains("simulator: https://127.0.0.1:\(environment["PUSHCTL_SIMULATOR_PORT"]!)"), "\(banner)")
        let lines = banner.split(separator: "\n").map(String.init)
        let keyLine = try #require(lines.firstIndex { $0.hasPrefix("App 'example-live'") }, "\(banner)")
        let key = lines[keyLine + 1].trimmingCharacters(in: .whitespaces)

        // A device registered and sent to through the .p8 the variable names, to the simulator on its port.
        let token = String(repeating: "6e", count: 32)
        var (status, body) = try await ServeCommandTests.call(
            "POST", "\(api)/v1/apps/example-live/devices", key: key, form: "oldToken=(null)&newToken=\(token)")
        #expect(status == 201, "\(String(describing: body))")
        (status, body) = try await ServeCommandTests.call(
            "POST", "\(api)/v1/apps/example-live/notifications", key: key, json: #"{"alert":"From the environment","all":true}"#)
        #expect(status == 202, "\(String(describing: body))")
        try await waitUntil(deadline: .seconds(60), "the simulator accepted the notification") {
            let (_, inbox) = try await ServeCommandTests.call("GET", "\(api)/v1/apps/example-live/inbox", key: key)
            return inbox?["entries"]?.arrayValue?.contains { $0["content"]?["aps"]?["alert"]?.stringValue == "From the environment" } == true
        }
        serve.terminate()
        try await serve.exited()

        // The device is in the registry the variable named, not the file's.
        let withEnvironment = try await CLI.run(
            ["tokens", "count", "--config", config, "--app", "example-live"], environment: ["PUSHCTL_DATABASE": database])
        #expect(withEnvironment.status == 0 && withEnvironment.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1",
                "\(withEnvironment.stdout)\(withEnvironment.stderr)")
        let withoutEnvironment = try await CLI.run(["tokens", "count", "--config", config, "--app", "example-live"])
        #expect(withoutEnvironment.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(withoutEnvironment.stdout)\(withoutEnvironment.stderr)")

        // doctor names every variable it applied and the key each set, never a value.
        let doctor = try await CLI.run(["doctor", "--config", config], environment: environment)
        #expect(doctor.stdout.contains("from the environment: PUSHCTL_ADMIN_HOST (server.admin.host)"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("PUSHCTL_APP_EXAMPLE_LIVE_APNS_P8 (apps.example-live.auth.p8)"), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains(p8), "\(doctor.stdout)")
    }

    @Test func aSecretByValueOrAnUnknownVariableIsOneLineExit2NamingTheFileForm() async throws {
        var w = try await World.make(tokens: 0, startSimulator: false)
        defer { w.stop() }
        let config = try ServeCommandTests.sideBySideConfig(in: w, simulatorPort: 1)
        let refused = try await CLI.run(
            ["tokens", "count", "--config", config, "--app", "example"], environment: ["PUSHCTL_APP_EXAMPLE_APNS_PASSWORD": "hunter2-secret"])
        #expect(refused.status == 2)
        let line = refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!line.contains("\n") && line.contains("PUSHCTL_APP_EXAMPLE_APNS_PASSWORD_FILE") && !line.contains("hunter2"), "\(line)")
        let typo = try await CLI.run(["tokens", "count", "--config", config, "--app", "example"], environment: ["PUSHCTL_DATABSE": "/tmp/x.sqlite"])
        #expect(typo.status == 2 && typo.stderr.contains("PUSHCTL_DATABSE is not a configuration variable"), "\(typo.stderr)")
    }
}
