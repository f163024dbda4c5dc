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

    @Test func statementsDoNotShareNames() {
        let types: [any AccountPostgres.PreparedQuery.Type] = [
            Prepared.UserByLocalID.self, Prepared.UserByLocalIDForUpdate.self, Prepared.UserByEmail.self,
            Prepared.UserByEmailForUpdate.self, Prepared.UserByPhoneNumber.self, Prepared.UsersByLocalIDs.self,
            Prepared.UsersByEmails.self, Prepared.UsersByPhoneNumbers.self, Prepared.SessionState.self,
            Prepared.SessionAndOwner.self, Prepared.RefreshWrite.self, Prepared.LocalIDByEmail.self,
            Prepared.ActionCode.self, Prepared.ActionCodeForUpdate.self, Prepared.ActionCodeSpend.self,
            Prepared.SessionInsert.self, Prepared.SignInWrite.self, Prepared.EmailLinkLogin.self,
        ]
        let names = types.map { $0.name }
        #expect(Set(names).count == types.count)
        let sql = types.map { $0.sql }
        #expect(Set(sql).count == types.count)
    }
}
