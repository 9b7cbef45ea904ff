import PushCore
import Testing

@Suite struct PushConfigurationTests {
    static let example = """
        {
          "database": "../data/pushctl.sqlite",
          "server":    { "host": "127.0.0.1", "port": 8080 },
          "simulator": { "host": "127.0.0.1", "port": 2197, "certificates": "../Certificates/dev" },
          "apps": {
            "example": {
              "topic": "com.example.app",
              "endpoint": "simulator",
              "caFile": null,
              "auth": { "p12": "../Certificates/dev/client.p12", "passwordFile": "../Certificates/dev/client.p12.password" },
              "registrationKeys": [],
              "sendKeys": [],
              "payloadLimit": null,
              "window": null,
              "connections": null
            }
          }
        }
        """

    func decode(_ text: String) throws(ConfigurationError) -> PushConfiguration {
        try PushConfiguration(json: Array(text.utf8), baseDirectory: "/srv/push/Config", zones: .foundation())
    }

    @Test func decodesTheDefaultFileAndResolvesPathsAgainstItsDirectory() throws {
        let config = try decode(Self.example)
        #expect(config.database == "/srv/push/data/pushctl.sqlite")
        #expect(config.simulator.certificates == "/srv/push/Certificates/dev")
        let app = try config.app("example")
        #expect(app.apns!.endpoint == .simulator)
        #expect(app.apns!.defaultEnvironment == .development)
        #expect(app.apns!.auth == .certificate(p12: "/srv/push/Certificates/dev/client.p12", password: .file("/srv/push/Certificates/dev/client.p12.password")))
    }

    @Test func aUserSecretComesFromAFileOrTheEnvironmentAndTheDefaultZoneIsChecked() throws {
        func app(_ extra: String) -> String {
            Self.example.replacingOccurrences(of: #""connections": null"#, with: #""connections": null, "# + extra)
        }
        let file = try decode(app(#""userSecretFile": "user.secret", "defaultTimeZone": "Europe/Berlin""#)).app("example")
        #expect(file.userSecret == .file("/srv/push/Config/user.secret"))
        #expect(file.effectiveDefaultTimeZone == "Europe/Berlin")
        #expect(try decode(app(#""userSecretFile": "user.secret""#)).secretFiles.map(\.key).contains("apps.example.userSecretFile"))
        #expect(try decode(app(#""userSecretEnv": "USER_SECRET""#)).app("example").userSecret == .environment("USER_SECRET"))
        #expect(try decode(Self.example).app("example").effectiveDefaultTimeZone == "UTC")
        for (bad, says) in [
            (#""userSecret": "inline""#, "userSecretFile or userSecretEnv"),
            (#""userSecretFile": "a", "userSecretEnv": "B""#, "not both"),
            (#""defaultTimeZone": "CEST""#, "IANA time zone"),
        ] {
            #expect { try decode(app(bad)) } throws: { ($0 as? ConfigurationError)?.message.contains(says) == true }
        }
    }

    @Test func webPushSettingsAreDecodedWithTheirHostPolicyAndClearErrors() throws {
        func app(_ webpush: String) -> String {
            Self.example.replacingOccurrences(of: #""connections": null"#, with: #""connections": null, "webpush": "# + webpush)
        }
        let config = try decode(app(#"""
            {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com", "allowedHosts": ["push.example.net:8443", "*.push.test"],
             "caFile": "ca.pem", "declarative": true}
            """#))
        let web = try #require(try config.app("example").webPush)
        #expect(web.vapidKey == "/srv/push/Config/vapid.pem" && web.caFile == "/srv/push/Config/ca.pem")
        #expect(web.subject == "mailto:ops@example.com" && web.declarative)
        #expect(web.hostPolicy == (try WebPushHostPolicy(allowedHosts: ["push.example.net:8443", "*.push.test"])))
        // The known push services come first, the configured hosts after them.
        #expect(web.hostPolicy.entries.count == WebPushHostPolicy.defaultHosts.count + 2)
        // The VAPID key is a secret file, checked like a .p8.
        #expect(config.secretFiles.contains(SecretFile(key: "apps.example.webpush.vapidKey", path: "/srv/push/Config/vapid.pem")))
        let plain = try #require(try decode(app(#"{"vapidKey": "v.pem", "subject": "https://example.com/contact"}"#)).app("example").webPush)
        #expect(plain.allowedHosts.isEmpty && !plain.declarative && plain.caFile == nil)
        #expect(try decode(Self.example).app("example").webPush == nil)
        for (bad, says) in [
            (#"{"subject": "mailto:a@b.c"}"#, "apps.example.webpush.vapidKey is required"),
            (#"{"vapidKey": "v.pem"}"#, "apps.example.webpush.subject is required"),
            (#"{"vapidKey": "v.pem", "subject": "ops@example.com"}"#, "apps.example.webpush.subject must be a mailto: address or an https: URL"),
            (#"{"vapidKey": "v.pem", "subject": "http://example.com"}"#, "must be a mailto: address or an https: URL"),
            (#"{"vapidKey": "v.pem", "subject": "mailto:nobody"}"#, "must be a mailto: address or an https: URL"),
            (#"{"vapidKey": "v.pem", "subject": "mailto:a@b.c", "allowedHosts": ["bad host"]}"#, "apps.example.webpush.allowedHosts: 'bad host'"),
            (#"{"vapidKey": "v.pem", "subject": "mailto:a@b.c", "allowedHosts": "x"}"#, "must be an array"),
            (#"{"vapidKey": "v.pem", "subject": "mailto:a@b.c", "declarative": "yes"}"#, "true or false"),
            (#"{"vapidKey": "v.pem", "subject": "mailto:a@b.c", "vapid": "x"}"#, "apps.example.webpush: unknown key 'vapid'"),
        ] {
            #expect { try decode(app(bad)) } throws: { ($0 as? ConfigurationError)?.message.contains(says) == true }
        }
    }

    @Test func fcmSettingsAreDecodedWithTheirEndpointAndClearErrors() throws {
        func app(_ fcm: String) -> String {
            Self.example.replacingOccurrences(of: #""connections": null"#, with: #""connections": null, "fcm": "# + fcm)
        }
        let config = try decode(app(#"{"serviceAccount": "firebase.json", "endpoint": "simulator", "caFile": "ca.pem"}"#))
        let fcm = try #require(try config.app("example").fcm)
        #expect(fcm == FCMSettings(serviceAccount: "/srv/push/Config/firebase.json", endpoint: .simulator, caFile: "/srv/push/Config/ca.pem"))
        // The service account is a secret file, checked like a .p8.
        #expect(config.secretFiles.contains(SecretFile(key: "apps.example.fcm.serviceAccount", path: "/srv/push/Config/firebase.json")))
        #expect(try decode(app(#"{"serviceAccount": "/a.json"}"#)).app("example").fcm == FCMSettings(serviceAccount: "/a.json"))
        #expect(try decode(app(#"{"serviceAccount": "/a.json", "endpoint": "https://fcm.test:8443"}"#)).app("example").fcm?.endpoint
            == .url(host: "fcm.test", port: 8443))
        #expect(try decode(Self.example).app("example").fcm == nil)
        for (bad, says) in [
            (#"{"endpoint": "simulator"}"#, "apps.example.fcm.serviceAccount is required"),
            (#"{"serviceAccount": ""}"#, "apps.example.fcm.serviceAccount is required"),
            (#"{"serviceAccount": "a.json", "endpoint": "development"}"#, "apps.example.fcm.endpoint must be production, simulator or an https://host:port URL"),
            (#"{"serviceAccount": "a.json", "endpoint": "http://x"}"#, "apps.example.fcm.endpoint must be production"),
            (#"{"serviceAccount": "a.json", "key": "x"}"#, "apps.example.fcm: unknown key 'key'"),
        ] {
            #expect { try decode(app(bad)) } throws: { ($0 as? ConfigurationError)?.message.contains(says) == true }
        }
    }

    @Test func unknownKeysAreNamed() {
        #expect(throws: ConfigurationError("apps.example: unknown key 'topc'")) {
            try decode(#"{"apps":{"example":{"topc":"x","topic":"t","auth":{"p8":"k.p8","keyId":"K","teamId":"T"}}}}"#)
        }
        #expect(throws: ConfigurationError("config: unknown key 'databse'")) { try decode(#"{"databse":"x"}"#) }
        #expect(throws: ConfigurationError("server: unknown key 'bind'")) { try decode(#"{"server":{"bind":"x"}}"#) }
    }

    @Test func windowIsOptionalAndBounded() throws {
        #expect(try decode(Self.example).app("example").window == nil)
        func app(window: Int) -> String {
            #"{"apps":{"a":{"topic":"t","auth":{"p8":"k.p8","keyId":"K","teamId":"T"},"window":\#(window)}}}"#
        }
        #expect(try decode(app(window: 2000)).app("a").window == 2000)
        #expect(throws: ConfigurationError("apps.a.window must be between 1 and 10000 notifications, not 0")) {
            try decode(app(window: 0))
        }
    }

    @Test func connectionsAreOptionalAndBoundedToSixteen() throws {
        #expect(try decode(Self.example).app("example").connections == nil)
        func app(connections: Int) -> String {
            #"{"apps":{"a":{"topic":"t","auth":{"p8":"k.p8","keyId":"K","teamId":"T"},"connections":\#(connections)}}}"#
        }
        #expect(try decode(app(connections: 16)).app("a").connections == 16)
        #expect(throws: ConfigurationError("apps.a.connections must be between 1 and 16 HTTP/2 connections, not 0")) {
            try decode(app(connections: 0))
        }
        #expect(throws: ConfigurationError("apps.a.connections must be between 1 and 16 HTTP/2 connections, not 17")) {
            try decode(app(connections: 17))
        }
    }

    @Test func deliveryRetentionDefaultsToThirtyDaysAndIsBounded() throws {
        #expect(try decode(Self.example).deliveryRetentionDays == 30)
        #expect(try decode(#"{"deliveryRetentionDays":1}"#).deliveryRetentionDays == 1)
        #expect(try decode(#"{"deliveryRetentionDays":3650}"#).deliveryRetentionDays == 3650)
        #expect(throws: ConfigurationError("config.deliveryRetentionDays must be between 1 and 3650 days, not 0")) {
            try decode(#"{"deliveryRetentionDays":0}"#)
        }
        #expect(throws: ConfigurationError("config.deliveryRetentionDays must be between 1 and 3650 days, not 3651")) {
            try decode(#"{"deliveryRetentionDays":3651}"#)
        }
        #expect(throws: ConfigurationError.self) { try decode(#"{"deliveryRetentionDays":"30"}"#) }
    }

    @Test func inlinePasswordsAreRefused() {
        #expect(throws: ConfigurationError.self) {
            try decode(#"{"apps":{"a":{"topic":"t","auth":{"p12":"c.p12","password":"hunter2"}}}}"#)
        }
        #expect(throws: ConfigurationError.self) {
            try decode(#"{"apps":{"a":{"topic":"t","auth":{"p12":"c.p12","passwordFile":"f","passwordEnv":"E"}}}}"#)
        }
    }

    @Test func aWebhookNeedsAURLAndASecretThatIsNeverInline() throws {
        let auth = #""auth":{"p8":"/k.p8","keyId":"K","teamId":"T"}"#
        let config = try decode(#"{"apps":{"a":{"topic":"t",\#(auth),"webhook":{"url":"https://backend.example/push-feedback","secretFile":"hook.secret"}}}}"#)
        let hook = try #require(try config.app("a").webhook)
        #expect(hook.url == "https://backend.example/push-feedback")
        guard case .file(let path) = hook.secret else { Issue.record("secretFile not kept"); return }
        #expect(path.hasSuffix("/hook.secret") && path.hasPrefix("/"))
        let env = try decode(#"{"apps":{"a":{"topic":"t",\#(auth),"webhook":{"url":"http://10.0.0.5:8080/hook","secretEnv":"HOOK_SECRET"}}}}"#)
        #expect(try env.app("a").webhook?.secret == .environment("HOOK_SECRET"))
        for bad in [
            #"{"url":"https://x/h","secret":"inline"}"#,
            #"{"url":"https://x/h"}"#,
            #"{"url":"https://x/h","secretFile":"f","secretEnv":"E"}"#,
            #"{"url":"ftp://x/h","secretEnv":"E"}"#,
            #"{"url":"https://user:pw@x/h","secretEnv":"E"}"#,
            #"{"secretEnv":"E"}"#,
            #"{"url":"https://x/h","secretEnv":"E","colour":"red"}"#,
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try decode(#"{"apps":{"a":{"topic":"t",\#(auth),"webhook":\#(bad)}}}"#)
            }
        }
    }

    @Test func endpointsAndKeys() throws {
        #expect(try APNsEndpoint(parsing: "https://apns.internal:8443") == .url(host: "apns.internal", port: 8443))
        #expect(try APNsEndpoint(parsing: "https://apns.internal") == .url(host: "apns.internal", port: 443))
        #expect(throws: ConfigurationError.self) { try APNsEndpoint(parsing: "http://x") }
        #expect(throws: ConfigurationError.self) { try APNsEndpoint(parsing: "https://x/path") }
        let hash = "sha256:" + String(repeating: "ab", count: 32)
        let config = try decode(#"{"apps":{"a":{"topic":"t","endpoint":"production","auth":{"p8":"/k.p8","keyId":"K","teamId":"T"},"sendKeys":["\#(hash)"]}}}"#)
        #expect(try config.app("a").sendKeys == [hash])
        #expect(try config.app("a").apns!.defaultEnvironment == .production)
        #expect(throws: ConfigurationError.self) {
            try decode(#"{"apps":{"a":{"topic":"t","auth":{"p8":"/k.p8","keyId":"K","teamId":"T"},"sendKeys":["abc"]}}}"#)
        }
    }

    @Test func channelAndBroadcastEndpoints() throws {
        let auth = #""auth":{"p8":"/k.p8","keyId":"K","teamId":"T"}"#
        // Unset: both follow the app's endpoint.
        let plain = try decode(#"{"apps":{"a":{"topic":"t","endpoint":"production",\#(auth)}}}"#).app("a")
        #expect(plain.apns!.channelEndpoint == nil)
        #expect(plain.apns!.broadcastEndpoint == nil)
        #expect(plain.apns!.effectiveChannelEndpoint == .production)
        #expect(plain.apns!.effectiveBroadcastEndpoint == .production)
        // Set: same syntax as endpoint.
        let set = try decode(
            #"{"apps":{"a":{"topic":"t","endpoint":"simulator","channelEndpoint":"https://manage.internal:2195","broadcastEndpoint":"development",\#(auth)}}}"#
        ).app("a")
        #expect(set.apns!.channelEndpoint == .url(host: "manage.internal", port: 2195))
        #expect(set.apns!.broadcastEndpoint == .development)
        #expect(set.apns!.effectiveChannelEndpoint == .url(host: "manage.internal", port: 2195))
        #expect(set.apns!.effectiveBroadcastEndpoint == .development)
        let simulator = try decode(#"{"apps":{"a":{"topic":"t","endpoint":"simulator","channelEndpoint":"simulator","broadcastEndpoint":null,\#(auth)}}}"#).app("a")
        #expect(simulator.apns!.effectiveChannelEndpoint == .simulator)
        #expect(simulator.apns!.effectiveBroadcastEndpoint == .simulator)
        // Errors name the key.
        #expect(throws: ConfigurationError.self) {
            try decode(#"{"apps":{"a":{"topic":"t","channelEndpoint":"http://x",\#(auth)}}}"#)
        }
        do {
            _ = try decode(#"{"apps":{"a":{"topic":"t","broadcastEndpoint":"staging",\#(auth)}}}"#)
            Issue.record("a bad broadcastEndpoint was accepted")
        } catch {
            #expect(error.message.hasPrefix("apps.a.broadcastEndpoint: "))
        }
        #expect(throws: ConfigurationError.self) {
            try decode(#"{"apps":{"a":{"topic":"t","channelEndpoint":5,\#(auth)}}}"#)
        }
    }

    @Test func unknownAppNamesTheConfiguredOnes() throws {
        let config = try decode(Self.example)
        #expect(throws: ConfigurationError("unknown app 'nope'; configured apps: example")) { try config.app("nope") }
    }

    @Test func resolveFoldsDotDot() {
        #expect(PushConfiguration.resolve("../a/./b", against: "/x/y") == "/x/a/b")
        #expect(PushConfiguration.resolve("/abs", against: "/x") == "/abs")
    }
}

extension PushConfigurationTests {
    static let tokenApp = #""topic":"t","auth":{"p8":"k.p8","keyId":"K","teamId":"T"}"#

    @Test func theProxyIsGlobalOrPerAppAndTheAppsOwnWins() throws {
        let config = try decode(#"""
            {"proxy": "http://proxy.internal:3128", "proxyCredentialsFile": "proxy.credentials",
             "apps": {"a": {\#(Self.tokenApp)},
                      "b": {\#(Self.tokenApp), "proxy": "http://[fd00::1]:8080", "proxyCredentialsEnv": "B_PROXY"}}}
            """#)
        let global = ProxySettings(host: "proxy.internal", port: 3128, credentials: .file("/srv/push/Config/proxy.credentials"))
        #expect(config.proxy == global)
        #expect(try config.proxy(for: config.app("a")) == global)
        let own = try config.proxy(for: config.app("b"))
        #expect(own == ProxySettings(host: "fd00::1", port: 8080, credentials: .environment("B_PROXY")))
        #expect(own?.url == "http://[fd00::1]:8080")
        #expect(try decode(Self.example).proxy(for: decode(Self.example).app("example")) == nil)
    }

    @Test func aProxyURLWithCredentialsOrWithoutAPortOrNotHTTPIsRefused() {
        #expect(throws: ConfigurationError("config.proxy: put no credentials in the URL; use proxyCredentialsFile or proxyCredentialsEnv")) {
            try decode(#"{"proxy": "http://u:hunter2@proxy:3128"}"#)
        }
        #expect(throws: ConfigurationError("apps.a.proxy: put no credentials in the URL; use proxyCredentialsFile or proxyCredentialsEnv")) {
            try decode(#"{"apps": {"a": {\#(Self.tokenApp), "proxy": "https://u:p@proxy:3128"}}}"#)
        }
        #expect(throws: ConfigurationError("config.proxy must name its port (http://host:port): 'http://proxy'")) {
            try decode(#"{"proxy": "http://proxy"}"#)
        }
        #expect(throws: ConfigurationError.self) { try decode(#"{"proxy": "socks5://proxy:1080"}"#) }
        #expect(throws: ConfigurationError.self) { try decode(#"{"proxy": "http://proxy:3128/path"}"#) }
    }

    @Test func proxyCredentialsNeedAProxyAndExactlyOneSource() {
        #expect(throws: ConfigurationError("config: proxyCredentialsFile / proxyCredentialsEnv need a proxy")) {
            try decode(#"{"proxyCredentialsEnv": "P"}"#)
        }
        #expect(throws: ConfigurationError("apps.a: give proxyCredentialsFile or proxyCredentialsEnv, not both")) {
            try decode(#"{"apps": {"a": {\#(Self.tokenApp), "proxy": "http://p:1", "proxyCredentialsFile": "f", "proxyCredentialsEnv": "E"}}}"#)
        }
    }

    @Test func healthWarningDaysDefaultsToThirtyAndIsBounded() throws {
        #expect(try decode(Self.example).healthWarningDays == 30)
        #expect(try decode(#"{"healthWarningDays": 7}"#).healthWarningDays == 7)
        #expect(throws: ConfigurationError("config.healthWarningDays must be between 0 and 3650 days, not -1")) {
            try decode(#"{"healthWarningDays": -1}"#)
        }
    }
}

extension PushConfigurationTests {
    @Test func theDeliveryLogIsFailuresUnlessTheConfigOrTheAppWidensIt() throws {
        let plain = try decode(Self.example)
        #expect(plain.deliveryLog == .failures)
        #expect(try plain.deliveryLog(for: plain.app("example")) == .failures)
        #expect(plain.deliveryLogs == ["example": .failures])

        let config = try decode(#"""
            {"deliveryLog": "all",
             "apps": {"a": {\#(Self.tokenApp)},
                      "b": {\#(Self.tokenApp), "deliveryLog": "failures"},
                      "c": {\#(Self.tokenApp), "deliveryLog": "all"}}}
            """#)
        #expect(config.deliveryLog == .all)
        #expect(try config.deliveryLog(for: config.app("a")) == .all)
        #expect(try config.deliveryLog(for: config.app("b")) == .failures)
        #expect(try config.app("a").deliveryLog == nil)
        #expect(config.deliveryLogs == ["a": .all, "b": .failures, "c": .all])

        let one = try decode(#"{"apps": {"a": {\#(Self.tokenApp)}, "c": {\#(Self.tokenApp), "deliveryLog": "all"}}}"#)
        #expect(one.deliveryLogs == ["a": .failures, "c": .all])
    }

    @Test func aDeliveryLogScopeOtherThanAllOrFailuresIsRefusedWithTheKeyNamed() {
        #expect(throws: ConfigurationError(#"config.deliveryLog must be "all" or "failures", not "none""#)) {
            try decode(#"{"deliveryLog": "none"}"#)
        }
        #expect(throws: ConfigurationError(#"apps.a.deliveryLog must be "all" or "failures", not "Failures""#)) {
            try decode(#"{"apps": {"a": {\#(Self.tokenApp), "deliveryLog": "Failures"}}}"#)
        }
        #expect(throws: ConfigurationError("config.deliveryLog must be a string")) { try decode(#"{"deliveryLog": false}"#) }
    }
}
