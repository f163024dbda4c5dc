import AccountCore
import AccountPostgres
import AccountTesting
import Foundation
import PostgresNIO
import Testing

/// The import's clean batch goes in by `COPY` in text format (``CopyText``); these hold it to
/// what the `INSERT … json_to_recordset` path stores, against PostgreSQL.
@Suite("Import by COPY")
struct CopyImportTests {
    /// Instants PostgreSQL's `to_timestamp(float8)` rounds in every way: half-microsecond ties
    /// (to even), before 1970 and before 2000 (its epoch), the ends of the range text can write.
    static let instants: [Double] = [
        0, 1_600_000_000.123, 1_600_000_000.1234565, 1_600_000_000.1234575, -0.0000005, -0.0000015, -1_000_000_000.999_999_5,
        946_684_800, 946_684_799.999_999_5, 946_684_800.000_000_5, 1_700_000_000.5, 253_402_300_799.5, -62_135_596_800,
        -62_135_596_799.5, 4_102_444_800.000_001, 1_764_000_000 + 1.0 / 3.0,
    ]

    @Test("an instant's text is the timestamptz to_timestamp stores for it, to the microsecond; outside years 1–9999 there is none")
    func instantsAsToTimestamp() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { pool in
            for seconds in Self.instants {
                let text = try #require(CopyText.utc(Date(timeIntervalSince1970: seconds)), "\(seconds)")
                let rows = try await pool.query(
                    "SELECT to_timestamp(\(seconds)::float8) = \(text)::timestamptz, to_timestamp(\(seconds)::float8)::text, \(text)::timestamptz::text"
                )
                let (same, stored, copied) = try #require(try rows.first?.decode((Bool, String, String).self))
                #expect(same, "\(seconds): to_timestamp \(stored), copied \(copied)")
            }
        }
        #expect(CopyText.utc(Date(timeIntervalSince1970: -62_135_596_801)) == nil)
        #expect(CopyText.utc(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(CopyText.utc(Date(timeIntervalSince1970: .infinity)) == nil)
    }

    static func user(_ id: String, _ n: Int, text: String) -> UserRecord {
        UserRecord(
            localID: id, email: "\(id)@copy.example", emailVerified: n % 2 == 0, emailLinkSignin: n == 1,
            initialEmail: "\(id)@first.example",
            displayName: text, photoURL: n == 2 ? nil : "https://example.com/\(n)?q=\\t",
            phoneNumber: "+1555010\(id.hasPrefix("a") ? 1 : 2)\(n)",
            disabled: n == 3, customAttributes: #"{"note":"tab\there \\ back","n":\#(n)}"#, customAuth: n == 2, anonymous: false,
            createdAt: Date(timeIntervalSince1970: Self.instants[n]),
            lastLoginAt: n == 0 ? nil : Date(timeIntervalSince1970: 1_600_000_500.456_789_5),
            validSince: 1_600_000_000 + Int64(n), tokensValidAfter: Date(timeIntervalSince1970: 1_600_000_000.000_000_5),
            credentialVersion: Int64(n),
            password: n == 2
                ? nil
                : PasswordCredential(
                    stored: StoredPassword(
                        algorithm: "HMAC_SHA256", hash: [0, 9, 10, 13, 92, 255, UInt8(n)], salt: n == 1 ? nil : [92, 120, 0, 9],
                        parameters: ["key": "a\\b\tc"]),
                    updatedAt: Date(timeIntervalSince1970: 1_600_000_000.999_999_5)),
            federated: n == 1
                ? [
                    FederatedIdentity(
                        providerID: "google.com", rawID: "\(id)-g", email: "\(id)@gmail.com",
                        linkedAt: Date(timeIntervalSince1970: 1_600_000_000))
                ] : []
        )
    }

    @Test(
        "a clean batch by COPY reads back as the same users written one by one (tabs, newlines, backslashes, NULLs, bytes, rounded instants); a taken email falls back and is reported"
    )
    func copyMatchesOneByOne() async throws {
        let url = try await TestDatabase.createMigrated()
        try await TestDatabase.withClient(url) { pool in
            let store = PostgresAccountStore(database: pool, logger: TestDatabase.logger)
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            let texts = ["plain", "tab\there", "line\nbreak\r\nand \\N \\. back\\slash", "\\", "é \"quoted\" 🙂"]
            let copied = texts.indices.map { Self.user("a\($0)", $0, text: texts[$0]) }
            #expect(try await store.importUsers(copied.enumerated().map { ($0, $1) }, allowOverwrite: false, now: now).isEmpty)
            // The same users again under other ids, plus one whose email is taken: the batch goes
            // user by user (the INSERT path) and reports the one.
            let single = texts.indices.map { Self.user("b\($0)", $0, text: texts[$0]) }
            var taken = Self.user("c", 0, text: "x")
            taken.email = copied[0].email
            taken.phoneNumber = nil
            let errors = try await store.importUsers((single + [taken]).enumerated().map { ($0, $1) }, allowOverwrite: false, now: now)
            #expect(errors.keys.sorted() == [texts.count])
            for n in texts.indices {
                let bulk = try #require(try await store.user(localID: "a\(n)"))
                var one = try #require(try await store.user(localID: "b\(n)"))
                #expect(bulk.displayName == texts[n])
                #expect(bulk.customAttributes == copied[n].customAttributes)
                #expect(bulk.password?.stored == copied[n].password?.stored)
                #expect(bulk.federated.map(\.rawID) == copied[n].federated.map(\.rawID))
                // Everything else as the INSERT path stores it, once the ids are made alike.
                one.localID = bulk.localID
                one.email = bulk.email
                one.initialEmail = bulk.initialEmail
                one.phoneNumber = bulk.phoneNumber
                one.federated = one.federated.map { link in
                    var link = link
                    link.rawID = bulk.federated.first?.rawID ?? link.rawID
                    link.email = bulk.federated.first?.email ?? link.email
                    return link
                }
                #expect(bulk == one, "user \(n)")
            }
        }
    }
}
