import AccountCore
import Testing

/// Client addresses (federation-and-limits.md §E.2, decision 13) and action languages, database-free.
@Suite("Addresses and languages (pure)")
struct AddressRulesTests {
    @Test(
        "canonical text: IPv4-mapped and NAT64 addresses are their IPv4 address; IPv6 in RFC 5952 form; zones and brackets dropped",
        arguments: [
            ("::ffff:127.0.0.1", "127.0.0.1"), ("::FFFF:7f00:1", "127.0.0.1"), ("64:ff9b::203.0.113.9", "203.0.113.9"),
            ("64:ff9b::cb00:7109", "203.0.113.9"), ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("[::1]", "::1"), ("fe80::1%eth0", "fe80::1"), ("198.51.100.7", "198.51.100.7"),
            ("0:0:0:0:0:0:0:0", "::"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"), ("10.0.255.1", "10.0.255.1"),
        ])
    func canonical(raw: String, expected: String) {
        #expect(IPAddress.canonical(raw) == expected)
    }

    @Test(
        "not addresses",
        arguments: [
            "", "1.2.3", "1.2.3.256", "01.2.3.4x", "::g", "1:2:3:4:5:6:7:8:9", "1.2.3.4:80", ":::", "256.1.1.1", "1.2.3.4.", ".1.2.3",
            "1..2.3", "1.2.3.4444", "1.2.3.-4",
        ])
    func notAddresses(raw: String) {
        #expect(IPAddress.canonical(raw) == nil)
    }

    @Test("keys: IPv4 by address (mapped or not), IPv6 by /64, mail by /56")
    func keys() {
        #expect(IPAddress.networkKey("::ffff:203.0.113.9") == "203.0.113.9")
        #expect(IPAddress.networkKey("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(IPAddress.networkKey("2001:db8:1:1ff::2", ipv6Prefix: 56) == IPAddress.networkKey("2001:db8:1:100::1", ipv6Prefix: 56))
        #expect(IPAddress.networkKey("2001:db8:1:1ff::2", ipv6Prefix: 56) == "2001:db8:1:100::/56")
        #expect(IPAddress.networkKey("2001:db8:1:200::1", ipv6Prefix: 56) != IPAddress.networkKey("2001:db8:1:100::1", ipv6Prefix: 56))
    }

    @Test("networks: an IPv4 network holds mapped peers; a mapped network is the IPv4 one; only /0 holds everything")
    func networks() throws {
        let loopback = try #require(IPNetwork("127.0.0.1/32"))
        #expect(loopback.contains("::ffff:127.0.0.1") && loopback.contains("127.0.0.1") && !loopback.contains("127.0.0.2"))
        let mapped = try #require(IPNetwork("::ffff:10.0.0.0/104"))
        #expect(mapped.contains("10.1.2.3") && mapped.contains("::ffff:10.9.9.9") && !mapped.contains("11.0.0.1"))
        let allMapped = try #require(IPNetwork("::ffff:0:0/96"))
        let allIPv4 = try #require(IPNetwork("0.0.0.0/0"))
        let private10 = try #require(IPNetwork("10.0.0.0/8"))
        #expect(allMapped.coversEverything && allIPv4.coversEverything && !private10.coversEverything)
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("nonsense") == nil)
    }

    @Test(
        "an action's language is a tag of at most 35 bytes",
        arguments: [
            ("en", "en"), ("fr-CA", "fr-CA"), ("zh_Hant_TW", "zh_Hant_TW"), ("", nil), ("e\u{301}", nil), ("en-", nil),
            ("x" + String(repeating: "\u{301}", count: 5000), nil), ("en-US-x-abcdefghij", nil), ("123", nil), ("de<script>", nil),
        ] as [(String, String?)])
    func language(raw: String, expected: String?) {
        #expect(ActionLanguage.tag(raw) == expected)
    }
}
