package import AccountCore
import Crypto
package import Foundation
import Logging
import PostgresNIO

extension PostgresAccountStore: ActionCodeStore {
    /// SHA-256 of a code: what the table keys on.
    static func hash(_ code: String) -> Data {
        Data(SHA256.hash(data: Data(code.utf8)))
    }

    package func store(_ code: OutgoingCode, precondition: IssuePrecondition?) async throws {
        try await transaction { tx in
            if let precondition {
                guard let user = try await tx.user(localID: precondition.localID, lock: true) else {
                    throw AccountError(.userNotFound)
                }
                if let session = precondition.session { try await tx.check(session, user: user) }
                guard user.credentialVersion == precondition.credentialVersion, user.email == precondition.email else {
                    throw AccountError(.unavailable, "The account changed while the code was made; retry.")
                }
            }
            try await tx.insert(code)
        }
    }

    package func code(_ code: String) async throws -> ActionCodeRecord? {
        try await translating {
            try await onConnection { tx in try await tx.code(code, lock: false) }
        }
    }

    package func apply(_ code: String, recover: OutgoingCode?, now: Date) async throws -> UserRecord {
        try await transaction { tx in
            guard let record = try await tx.spend(code, now: now) else {
                throw AccountError(.invalidOOBCode)
            }
            try record.requireUsable(kinds: [.verifyEmail, .verifyAndChangeEmail, .recoverEmail], now: now)
            guard let localID = record.localID,
                let user = try await tx.user(localID: localID, lock: true)
            else { throw AccountError(.emailNotFound) }
            if user.disabled { throw AccountError(.userDisabled) }
            guard user.email == record.email else { throw AccountError(.invalidOOBCode) }
            switch record.kind {
            case .verifyEmail:
                try await tx.query("UPDATE users SET email_verified = true WHERE tenant_id = \(tenant) AND local_id = \(localID)")
            case .verifyAndChangeEmail, .recoverEmail:
                guard let target = record.newEmail else { throw AccountError(.invalidOOBCode) }
                if let owner = try await tx.localID(ofEmail: target), owner != localID {
                    throw AccountError(.emailExists)
                }
                // A change proves the new mailbox; a recovery gives back the old address as it
                // was, so an unproven address stays unproven (and the stripping rule still
                // applies to whoever proves it later).
                let verified = record.kind == .verifyAndChangeEmail || record.restoreEmailVerified
                try await tx.query(
                    """
                    UPDATE users SET email = \(target), email_verified = \(verified), email_link_signin = false,
                        initial_email = coalesce(initial_email, email)
                    WHERE tenant_id = \(tenant) AND local_id = \(localID)
                    """)
                _ = try await tx.revokeAll(user: user, reason: .emailChanged, now: now)
                if record.kind == .verifyAndChangeEmail, let recover {
                    try await tx.insert(recover, restoreEmailVerified: user.emailVerified)
                }
            default:
                throw AccountError(.invalidOOBCode)
            }
            return try await tx.user(localID: localID, lock: false)!
        }
    }

    package func resetPassword(_ code: String, password: StoredPassword, now: Date) async throws -> UserRecord {
        try await transaction { tx in
            guard let record = try await tx.code(code, lock: true) else {
                throw AccountError(.invalidOOBCode)
            }
            try record.requireUsable(kinds: [.passwordReset], now: now)
            guard let localID = record.localID,
                let user = try await tx.user(localID: localID, lock: true)
            else { throw AccountError(.emailNotFound) }
            guard user.email == record.email else { throw AccountError(.invalidOOBCode) }
            if user.disabled { throw AccountError(.userDisabled) }
            if let plan = TakeoverRules.plan(for: user, proof: .passwordReset) {
                try await tx.strip(plan, from: user, now: now)
            }
            try await tx.writePassword(password, localID: localID, now: now)
            try await tx.query(
                """
                UPDATE users SET email_verified = true, credential_version = credential_version + 1
                WHERE tenant_id = \(tenant) AND local_id = \(localID)
                """)
            try await tx.query(
                """
                UPDATE action_codes SET used_at = \(now), used_reason = 'PASSWORD_RESET'
                WHERE tenant_id = \(tenant) AND local_id = \(localID) AND kind = 'PASSWORD_RESET' AND used_at IS NULL
                """)
            let current = try await tx.user(localID: localID, lock: false)!
            _ = try await tx.revokeAll(user: current, reason: .passwordReset, now: now)
            return try await tx.user(localID: localID, lock: false)!
        }
    }

    /// Reads what ``EmailLinkRules`` decides on, under the user's row lock, and writes its plan.
    package func completeEmailLink(_ completion: EmailLinkCompletion) async throws -> (UserRecord, MintTicket, isNewUser: Bool) {
        try await transaction { tx in
            let now = completion.now
            try EmailLinkRules.accept(try await tx.spend(completion.code, now: now), email: completion.email, now: now)
            let plan: EmailLinkPlan
            if let (linkID, guardSession) = completion.linkTo {
                let owner = try await tx.localID(ofEmail: completion.email)
                let user = try await tx.user(localID: linkID, lock: true)
                let live = user == nil ? false : try await tx.isLive(guardSession, localID: linkID)
                plan = try EmailLinkRules.link(email: completion.email, owner: owner, user: user, session: guardSession, sessionLive: live)
            } else {
                plan = try EmailLinkRules.signIn(existing: try await tx.user(email: completion.email, lock: true))
            }
            var isNewUser = false
            var localID: String
            // The user as written, when it can be known without reading it back.
            var written: UserRecord?
            switch plan {
            case .link(let user, let replacedEmail):
                localID = user.localID
                try await tx.query(
                    """
                    UPDATE users SET email = \(completion.email), email_verified = true, email_link_signin = true, anonymous = false,
                        last_login_at = \(now), initial_email = CASE WHEN email IS NOT NULL AND email <> \(completion.email)
                                             THEN coalesce(initial_email, email) ELSE initial_email END
                    WHERE tenant_id = \(tenant) AND local_id = \(localID)
                    """)
                if replacedEmail != nil {
                    _ = try await tx.revokeAll(user: user, reason: .emailChanged, now: now)
                    if let recover = completion.recover {
                        try await tx.insert(recover, restoreEmailVerified: user.emailVerified)
                    }
                }
            case .signIn(var user, let strip):
                localID = user.localID
                if let strip { try await tx.strip(strip, from: user, now: now) }
                try await tx.execute(Prepared.EmailLinkLogin(tenant: tx.tenant, localID: localID, now: now))
                if strip == nil {
                    // The common case, a verified account: only the two columns above changed.
                    user.emailLinkSignin = true
                    user.lastLoginAt = now
                    written = user
                }
            case .create:
                localID = completion.newLocalID
                isNewUser = true
                try await tx.query(
                    """
                    INSERT INTO users (tenant_id, local_id, email, email_verified, email_link_signin, created_at, last_login_at, tokens_valid_after,
                        valid_since)
                    VALUES (\(tenant), \(localID), \(completion.email), true, true, \(now), \(now), \(now), \(RevocationRules.seconds(now)))
                    """)
            }
            if written == nil { written = try await tx.user(localID: localID, lock: false) }
            guard let user = written else { throw AccountError(.unavailable) }
            let ticket = try await tx.insertSession(completion.session, user: user, now: now)
            return (user, ticket, isNewUser)
        }
    }

    // MARK: Steps

    /// The first row of ``Prepared/ActionCode``'s columns.
    static func decodeCode(_ rows: some AsyncSequence<PostgresRow, any Error>) async throws -> ActionCodeRecord? {
        for try await row in rows {
            let (kind, localID, email, newEmail, lang, expiresAt, usedAt, restoreVerified) = try row.decode(
                (String, String?, String, String?, String, Date, Date?, Bool?).self)
            guard let kind = ActionCodeKind(rawValue: kind) else { return nil }
            return ActionCodeRecord(
                kind: kind, localID: localID, email: email, newEmail: newEmail, lang: lang, expiresAt: expiresAt, usedAt: usedAt,
                restoreEmailVerified: restoreVerified ?? false)
        }
        return nil
    }

}
