import AccountAPI
import AccountCore
import Testing

/// Who the client is behind trusted proxies (federation-and-limits.md §E.2, decision 13), database-free.
@Suite("Client addresses behind proxies")
struct AccessPolicyTests {
    let policy = AccessPolicy(projectID: "p", apiKeys: nil, adminTokens: [:], trustedProxies: [IPNetwork("127.0.0.1/32")!])

    @Test("a dual-stack peer is its IPv4 address, and a proxy named in IPv4 is believed")
    func mappedPeer() {
        #expect(policy.clientAddress(peer: "::ffff:127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(policy.clientAddress(peer: "::ffff:127.0.0.1", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        #expect(policy.clientAddress(peer: "::ffff:10.0.0.1", forwardedFor: ["198.51.100.7"]) == "10.0.0.1", "not a trusted proxy")
    }

    @Test("forwarded entries: canonical, ports some proxies append removed, the right-most untrusted one chosen")
    func forwarded() {
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.7:5678"]) == "198.51.100.7")
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:DB8::1]:443"]) == "2001:db8::1")
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["64:ff9b::cb00:7109"]) == "203.0.113.9")
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.9, 198.51.100.7"]) == "198.51.100.7")
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.7", "127.0.0.1"]) == "198.51.100.7")
        #expect(policy.clientAddress(peer: "127.0.0.1", forwardedFor: ["not-an-address"]) == "127.0.0.1", "stop believing the header")
    }
}
