import PushCore
import Testing

@Suite struct ChannelStoragePolicyTests {
    @Test func parsesNamesAndApplesNumbers() {
        #expect(ChannelStoragePolicy(parsing: "no-storage") == .noStorage)
        #expect(ChannelStoragePolicy(parsing: "0") == .noStorage)
        #expect(ChannelStoragePolicy(parsing: "most-recent") == .mostRecent)
        #expect(ChannelStoragePolicy(parsing: "Most_Recent") == .mostRecent)
        #expect(ChannelStoragePolicy(parsing: "1") == .mostRecent)
        for bad in ["", "2", "-1", "none", "latest", " 1"] { #expect(ChannelStoragePolicy(parsing: bad) == nil, "\(bad)") }
    }

    @Test func namesAndWireValues() {
        #expect(ChannelStoragePolicy.noStorage.rawValue == 0)
        #expect(ChannelStoragePolicy.mostRecent.rawValue == 1)
        for policy in ChannelStoragePolicy.allCases {
            #expect(ChannelStoragePolicy(parsing: policy.name) == policy)
            #expect(ChannelStoragePolicy(parsing: String(policy.rawValue)) == policy)
            #expect("\(policy)" == policy.name)
        }
    }
}
