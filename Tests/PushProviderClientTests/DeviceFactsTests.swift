import Foundation
@testable import PushProviderClient
import Testing

/// ``DeviceFacts``: Foundation's identifiers turned into what the server takes.
@Suite struct DeviceFactsTests {
    @Test func foundationLocaleIdentifiersBecomeBCP47Tags() {
        #expect(DeviceFacts.bcp47("de_DE") == "de-DE")
        #expect(DeviceFacts.bcp47("en_US@calendar=buddhist") == "en-US")
        #expect(DeviceFacts.bcp47("en_US_POSIX") == "en-US")
        #expect(DeviceFacts.bcp47("zh_Hant_TW") == "zh-Hant-TW")
        #expect(DeviceFacts.bcp47("es_419") == "es-419")
        #expect(DeviceFacts.bcp47("fr") == "fr")
        #expect(DeviceFacts.bcp47("") == nil)
        #expect(DeviceFacts.bcp47("C") == nil)
    }

    @Test func fixedOffsetZonesAreLeftOutTheServerTakesOnlyTzNames() {
        #expect(DeviceFacts.timeZoneName("Europe/Berlin") == "Europe/Berlin")
        #expect(DeviceFacts.timeZoneName("GMT") == "GMT")
        #expect(DeviceFacts.timeZoneName("GMT+0200") == nil)
        #expect(DeviceFacts.current.osVersion != nil)
    }
}
