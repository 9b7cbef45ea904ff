import PushCore
import Testing

@Suite struct IPAddressTests {
    @Test func everyLocalRangeIsRefusedAndPublicAddressesAreNot() throws {
        let refused = ["0.0.0.0", "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                       "169.254.169.254", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1",
                       "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::127.0.0.1", "64:ff9b::a00:1",
                       "2002:c0a8:101::1", "::ffff:169.254.169.254"]
        for text in refused {
            let address = try #require(IPAddress(literal: text), "\(text)")
            #expect(address.refusal != nil, "\(text)")
        }
        for text in ["8.8.8.8", "17.253.144.10", "172.32.0.1", "100.128.0.1", "2a00:1450:4001::200e", "2620:149:a44::10",
                     "::ffff:8.8.8.8", "64:ff9b::808:808"] {
            let address = try #require(IPAddress(literal: text), "\(text)")
            #expect(address.refusal == nil, "\(text): \(address.refusal ?? "")")
        }
        #expect(IPAddress(literal: "::ffff:127.0.0.1")?.refusal == "a loopback address (inside ::ffff:7f00:1)")
    }

    @Test func onlyStrictLiteralsParse() {
        for text in ["127.1", "0177.0.0.1", "0x7f.0.0.1", "2130706433", "1.2.3.256", "1.2.3", "::1%eth0", "1::2::3",
                     "12345::1", "1:2:3:4:5:6:7:8:9", "", ":", "1.2.3.4.5"] {
            #expect(IPAddress(literal: text) == nil, "\(text)")
        }
        #expect(IPAddress(literal: "0:0:0:0:0:0:0:1")?.description == "::1")
        #expect(IPAddress(literal: "2001:db8:0:0:1:0:0:1")?.description == "2001:db8::1:0:0:1")
        #expect(IPAddress(literal: "1.2.3.4")?.bytes == [1, 2, 3, 4])
    }
}
