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
            try record.requireUsable(kinds: [.verifyEmail, .verifyAndChangeEmail, .recoverEmail, .revertSecondFactorAddition], now: now)
            guard let localID = record.localID,
                let user = try await tx.user(localID: localID, lock: true)
            else { throw AccountError(.emailNotFound) }
            if user.disabled { throw AccountError(.userDisabled) }
            guard user.email == record.email else { throw AccountError(.invalidOOBCode) }
            switch record.kind {
            case .verifyEmail:
                try await tx.writeUser(MailboxChanges.verified(user))
            case .verifyAndChangeEmail, .recoverEmail:
                let after = try MailboxChanges.emailReplaced(user, by: record)
                if let target = after.email, let owner = try await tx.localID(ofEmail: target), owner != localID {
                    throw AccountError(.emailExists)
                }
                try await tx.writeUser(after)
                _ = try await tx.revokeAll(user: user, reason: .emailChanged, now: now)
                if record.kind == .verifyAndChangeEmail, let recover {
                    try await tx.insert(recover, restoreEmailVerified: user.emailVerified)
                }
            case .revertSecondFactorAddition:
                // §B.12: the factor the notice named goes, and every session with it.
                guard let enrollmentID = record.enrollmentID, user.factors.contains(where: { $0.enrollmentID == enrollmentID }) else {
                    throw AccountError(.invalidOOBCode)
                }
                let after = try await tx.removeFactor(enrollmentID, from: user)
                _ = try await tx.revokeAll(user: after, reason: .mfaReverted, now: now)
                try await tx.audit(.mfaReverted, localID: localID, details: ["enrollmentId": enrollmentID])
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
            let strip = TakeoverRules.plan(for: user, proof: .passwordReset)
            if let strip { try await tx.strip(strip, from: user, now: now) }
            try await tx.writeUser(MailboxChanges.passwordReset(user, password: password, strip: strip, now: now))
            try await tx.writePassword(password, localID: localID, now: now)
            try await tx.retireResetCodes(localID: localID, reason: "PASSWORD_RESET", now: now)
            let current = try await tx.user(localID: localID, lock: false)!
            _ = try await tx.revokeAll(user: current, reason: .passwordReset, now: now)
            return try await tx.user(localID: localID, lock: false)!
        }
    }

    /// Reads what ``EmailLinkRules`` decides on, under the user's row lock, and writes its plan.
    package func completeEmailLink(_ completion: EmailLinkCompletion) async throws -> (UserRecord, MintTicket?, isNewUser: Bool) {
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
                try await tx.writeUser(EmailLinkRules.completed(user, email: completion.email, strip: nil, now: now))
                if replacedEmail != nil {
                    _ = try await tx.revokeAll(user: user, reason: .emailChanged, now: now)
                    if let recover = completion.recover {
                        try await tx.insert(recover, restoreEmailVerified: user.emailVerified)
                    }
                }
            case .signIn(let user, let strip):
                localID = user.localID
                let after = EmailLinkRules.completed(user, email: completion.email, strip: strip, now: now)
                if let strip {
                    try await tx.strip(strip, from: user, now: now)
                    try await tx.writeUser(after)
                } else if completion.challenge?.pending(for: user, session: completion.session) != nil {
                    // Challenged (§B.3): the mailbox is proven, but the sign-in is not done until the
                    // second factor, which writes the last sign-in.
                    var proven = after
                    proven.lastLoginAt = user.lastLoginAt
                    try await tx.writeUser(proven)
                    written = proven
                } else {
                    // The common case, a verified account: the prepared statement writes the
                    // three fields ``EmailLinkRules/completed(_:email:strip:now:)`` changes.
                    try await tx.execute(Prepared.EmailLinkLogin(tenant: tx.tenant, localID: localID, now: now))
                    written = after
                }
            case .create:
                localID = completion.newLocalID
                isNewUser = true
                try await tx.insertUsers([.emailLinkSignUp(localID: localID, email: completion.email, now: now)])
            }
            if written == nil { written = try await tx.user(localID: localID, lock: false) }
            guard let user = written else { throw AccountError(.unavailable) }
            if let pending = completion.challenge?.pending(for: user, session: completion.session) {
                try await tx.insertPending(pending)
                return (user, nil, isNewUser)
            }
            let ticket = try await tx.insertSession(completion.session, user: user, now: now)
            return (user, ticket, isNewUser)
        }
    }

    // MARK: Steps

    /// The first row of ``Prepared/ActionCode``'s columns.
    static func decodeCode(_ rows: some AsyncSequence<PostgresRow, any Error>) async throws -> ActionCodeRecord? {
        for try await row in rows {
            let (kind, localID, email, newEmail, lang, expiresAt, usedAt, restoreVerified, enrollmentID) = try row.decode(
                (String, String?, String, String?, String, Date, Date?, Bool?, String?).self)
            guard let kind = ActionCodeKind(rawValue: kind) else { return nil }
            var record = ActionCodeRecord(
                kind: kind, localID: localID, email: email, newEmail: newEmail, lang: lang, expiresAt: expiresAt, usedAt: usedAt,
                restoreEmailVerified: restoreVerified ?? false)
            record.enrollmentID = enrollmentID
            return record
        }
        return nil
    }

}
