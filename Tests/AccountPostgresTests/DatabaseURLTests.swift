import AccountPostgres
import Testing

/// Multi-host URLs as libpq takes them (issue 37).
@Suite("DatabaseURL")
struct DatabaseURLTests {
    @Test("several hosts: the URL form and the keyword form, read-write by default, ports per host or shared")
    func multiHost() throws {
        let url = try DatabaseURL("postgres://app:p%40ss@db1:5432,db2:5433,[::1]:6432/accounts?sslmode=require")
        #expect(url.endpoints == [.init(host: "db1", port: 5432), .init(host: "db2", port: 5433), .init(host: "::1", port: 6432)])
        #expect(url.targetSessionAttrs == .readWrite)
        #expect(url.username == "app" && url.password == "p@ss" && url.database == "accounts" && url.requireTLS)
        #expect(!url.redacted.contains("p@ss") && url.redacted.contains("db1:5432,db2:5433,[::1]:6432"))
        // The string form round-trips.
        #expect(try DatabaseURL(url.string) == url)

        let keyword = try DatabaseURL("postgres://app@/accounts?host=db1,db2&port=5432,5433&target_session_attrs=any")
        #expect(keyword.endpoints == [.init(host: "db1", port: 5432), .init(host: "db2", port: 5433)])
        #expect(keyword.targetSessionAttrs == .any)
        let shared = try DatabaseURL("postgres://app@db1,db2/accounts?port=6000")
        #expect(shared.endpoints == [.init(host: "db1", port: 6000), .init(host: "db2", port: 6000)])

        let single = try DatabaseURL("postgres://app@db1:5432/accounts")
        #expect(single.endpoints.count == 1 && single.targetSessionAttrs == .any)
        #expect(try DatabaseURL("postgres://app@db1/accounts?target_session_attrs=primary").targetSessionAttrs == .readWrite)
    }

    @Test("refused: an empty or malformed host in the list, a session target not served")
    func refused() {
        for bad in [
            "postgres://app@db1,,db2/accounts", "postgres://app@db1:x,db2/accounts", "postgres://app@db1,db2:99999/accounts",
            "postgres://app@db1,db2/accounts?target_session_attrs=standby",
        ] {
            #expect(throws: DatabaseURL.ParseError.self, "\(bad)") { try DatabaseURL(bad) }
        }
    }
}
