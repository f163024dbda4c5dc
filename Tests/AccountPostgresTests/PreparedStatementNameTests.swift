import Foundation
import PostgresNIO
import Testing

@testable import AccountPostgres

/// The names prepared statements go by on each connection: PostgreSQL keeps one plan per name, so
/// two statements sharing a name would run each other's SQL.
@Suite struct PreparedStatementNameTests {
    @Test func namesAreTheQualifiedTypeNames() {
        #expect(Prepared.UserByEmail.name == String(reflecting: Prepared.UserByEmail.self))
        #expect(Prepared.UserByEmail.name.hasSuffix("Prepared.UserByEmail"))
    }

    /// PostgresNIO asks for the name through its own protocol; that must reach the remembered
    /// name, not its default, which works the name out again on every execution.
    @Test func postgresNIOReadsTheRememberedName() {
        let type: any PostgresPreparedStatement.Type = Prepared.EmailLinkLogin.self
        let name = type.name
        #expect(name == String(reflecting: Prepared.EmailLinkLogin.self))
        #expect(PreparedStatementNames.isRemembered(Prepared.EmailLinkLogin.self))
    }

    @Test("every prepared statement is in the catalogue, under a name and with SQL of its own")
    func statementsDoNotShareNames() throws {
        let names = Prepared.catalogue.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(Prepared.catalogue.map(\.sql)).count == names.count)
        // The catalogue lists every type the file declares (a new statement left out of it would
        // be missing from docs/scaling.md's plans).
        let source = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Sources/AccountPostgres/Pool/PreparedStatements.swift"), encoding: .utf8)
        let declared = source.components(separatedBy: ": PreparedQuery {").count - 1
        #expect(declared == names.count)
    }
}
