import Foundation
import PushCore
import Testing

/// An app is a set of services: `apps.ID.apns`, `apps.ID.webpush`, `apps.ID.fcm`, each optional, at least one; the
/// flat APNs keys of older files load as the `apns` section.
@Suite struct AppServicesConfigurationTests {
    func decode(_ text: String) throws(ConfigurationError) -> PushConfiguration {
        try PushConfiguration(json: Array(text.utf8), baseDirectory: "/srv/push/Config", zones: .foundation())
    }

    static let web = #""webpush": {"vapidKey": "vapid.pem", "subject": "mailto:ops@example.com"}"#
    static let fcm = #""fcm": {"serviceAccount": "firebase.json"}"#
    static let apnsKeys = #""topic": "com.example.app", "endpoint": "simulator", "auth": {"p8": "k.p8", "keyId": "K", "teamId": "T"}"#

    @Test func aWebOnlyAppAndAnAndroidOnlyAppLoadWithoutAnyAPNsSetting() throws {
        let config = try decode(#"{"apps": {"news": {\#(Self.web), "sendKeys": []}, "android": {\#(Self.fcm)}}}"#)
        let news = try config.app("news")
        #expect(news.apns == nil && news.fcm == nil)
        #expect(news.webPush?.vapidKey == "/srv/push/Config/vapid.pem")
        #expect(news.services == [.webpush])
        let android = try config.app("android")
        #expect(android.apns == nil && android.webPush == nil)
        #expect(android.services == [.fcm])
        // No APNs secret is listed for them: nothing to check, nothing to load.
        #expect(config.secretFiles.map(\.key) == ["apps.android.fcm.serviceAccount", "apps.news.webpush.vapidKey"])
        // What only APNs does names the missing section.
        #expect(throws: ConfigurationError("app 'news' has no apns service (add apps.news.apns to the configuration)")) {
            try news.requireAPNs(app: "news")
        }
        #expect(news.liveActivityProblem?.contains("no apns service") == true)
    }

    @Test func theAPNsSectionHoldsTheAPNsKeysAndTheAppLevelKeysStayOutside() throws {
        let config = try decode(#"""
            {"apps": {"shop": {"apns": {\#(Self.apnsKeys), "payloadLimit": 2048, "caFile": "ca.pem",
              "channelEndpoint": "development", "broadcastEndpoint": "https://b.test:443"},
              \#(Self.web), "window": 800, "connections": 2, "outageLimitSeconds": 60}}}
            """#)
        let shop = try config.app("shop")
        let apns = try #require(shop.apns)
        #expect(apns.topic == "com.example.app" && apns.endpoint == .simulator && apns.payloadLimit == 2048)
        #expect(apns.caFile == "/srv/push/Config/ca.pem" && apns.channelEndpoint == .development)
        #expect(apns.effectiveBroadcastEndpoint == .url(host: "b.test", port: 443))
        #expect(apns.auth == .token(p8: "/srv/push/Config/k.p8", keyId: "K", teamId: "T"))
        #expect(shop.window == 800 && shop.connections == 2 && shop.outageLimitSeconds == 60)
        #expect(!shop.apnsKeysAreFlat)
        #expect(shop.services == [.apns, .webpush])
        #expect(config.secretFiles.map(\.key).contains("apps.shop.apns.auth.p8"))
        // The section's own errors are named under it; an app-level key inside it is unknown there.
        for (bad, says) in [
            (#"{"apns": {"endpoint": "simulator", "auth": {"p8": "k.p8", "keyId": "K", "teamId": "T"}}}"#, "apps.shop.apns.topic is required"),
            (#"{"apns": {"topic": "t"}}"#, "apps.shop.apns.auth is required"),
            (#"{"apns": {\#(Self.apnsKeys), "window": 5}}"#, "apps.shop.apns: unknown key 'window'"),
            (#"{"apns": {\#(Self.apnsKeys), "payloadLimit": 9000}}"#, "apps.shop.apns.payloadLimit must be between 1 and 5120"),
        ] {
            #expect { try decode(#"{"apps": {"shop": \#(bad)}}"#) } throws: { ($0 as? ConfigurationError)?.message.contains(says) == true }
        }
    }

    @Test func flatAPNsKeysLoadAsTheSectionAndBesideItAreAnErrorNamingBoth() throws {
        let flat = try decode(#"{"apps": {"old": {\#(Self.apnsKeys), "payloadLimit": 1000}}}"#).app("old")
        let section = try decode(#"{"apps": {"old": {"apns": {\#(Self.apnsKeys), "payloadLimit": 1000}}}}"#).app("old")
        #expect(flat.apns == section.apns)
        #expect(flat.apnsKeysAreFlat && !section.apnsKeysAreFlat)
        #expect(try decode(#"{"apps": {"old": {\#(Self.apnsKeys)}}}"#).secretFiles.map(\.key) == ["apps.old.auth.p8"])
        #expect(throws: ConfigurationError(
            "apps.both: apps.both.topic, apps.both.auth and apps.both.apns both configure APNs; move the keys into apps.both.apns"
        )) {
            try decode(#"{"apps": {"both": {"topic": "t", "auth": {"p8": "k.p8", "keyId": "K", "teamId": "T"}, "apns": {\#(Self.apnsKeys)}}}}"#)
        }
    }

    @Test func anAppWithoutAnyServiceIsRefusedNamingTheSections() {
        #expect(throws: ConfigurationError(
            "apps.empty needs at least one service: apps.empty.apns (iOS, macOS), apps.empty.webpush (browsers), apps.empty.fcm (Android), apps.empty.hms (Huawei), apps.empty.harmonyos (HarmonyOS NEXT) or apps.empty.unifiedpush (de-Googled Android)"
        )) {
            try decode(#"{"apps": {"empty": {"sendKeys": []}}}"#)
        }
    }

    /// The configuration files of 096a543 (`Config/pushctl.json`, packaging's), byte for byte: no user's file breaks.
    @Test(arguments: ["Config-pushctl.json", "packaging-pushctl.json"])
    func theFilesOfTheFlatFormLoadUnchanged(_ name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/config-096a543/\(name)")
        let bytes = try #require(FileManager.default.contents(atPath: url.path))
        let config = try PushConfiguration(json: Array(bytes), baseDirectory: "/srv/push/Config", zones: .foundation())
        let example = try config.app("example")
        #expect(example.apnsKeysAreFlat)
        #expect(example.apns?.topic == "com.example.app" && example.apns?.endpoint == .simulator)
        guard case .certificate? = example.apns?.auth else {
            Issue.record("example's .p12 credentials were not loaded as APNs'")
            return
        }
    }

    @Test func aSimulatorAppIsOneWhoseEveryServicePointsAtTheSimulator() throws {
        let simulator = SimulatorSettings(certificates: "/c")
        let apnsOnly = try decode(#"{"apps": {"a": {\#(Self.apnsKeys)}}}"#).app("a")
        #expect(apnsOnly.sendsToSimulator(simulator))
        let webToSimulator = try decode(#"""
            {"apps": {"w": {"webpush": {"vapidKey": "v.pem", "subject": "mailto:a@b.example", "allowedHosts": ["127.0.0.1:2197"]}}}}
            """#).app("w")
        #expect(webToSimulator.sendsToSimulator(simulator))
        let webElsewhere = try decode(#"{"apps": {"w": {\#(Self.web)}}}"#).app("w")
        #expect(!webElsewhere.sendsToSimulator(simulator))
        let fcmProduction = try decode(#"{"apps": {"f": {\#(Self.fcm)}}}"#).app("f")
        #expect(!fcmProduction.sendsToSimulator(simulator))
        let mixed = try decode(#"{"apps": {"m": {\#(Self.apnsKeys), \#(Self.fcm)}}}"#).app("m")
        #expect(!mixed.sendsToSimulator(simulator))
        func unifiedPush(_ exempt: String) throws -> AppSettings {
            try decode(#"""
                {"apps": {"u": {"unifiedpush": {"vapidKey": "v.pem", "subject": "mailto:a@b.example", "exemptHosts": [\#(exempt)]}}}}
                """#).app("u")
        }
        #expect(try unifiedPush(#""127.0.0.1:2197""#).sendsToSimulator(simulator))
        #expect(try !unifiedPush(#""10.0.0.0/8""#).sendsToSimulator(simulator))
    }
}
