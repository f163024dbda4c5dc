package import AccountCore
package import Foundation
import PostgresNIO

/// Phone sign-in (mfa-phone-tenants.md §A.4–A.7): each call one transaction that reads and locks
/// the session or proof and the account, asks ``PhoneRules``, and writes what they decide.
extension PostgresAccountStore: PhoneStore {
    package func startPhoneVerification(_ session: NewPhoneSession, sms: SealedSMS?) async throws {
        try await transaction { tx in try await tx.insertPhoneVerification(session, sms: sms) }
    }

    /// Thrown inside the transaction to roll it back when it would create an account not yet counted.
    private struct NeedsAdmission: Error {}

    package func signInWithPhone(_ request: PhoneSignIn) async throws -> PhoneOutcome {
        // One re-run when a concurrent sign-in created the account for this number first.
        for attempt in 1...2 {
            do {
                return try await transaction { tx in
                    let number: String
                    switch try await prove(request.proof, purpose: .signIn, now: request.now, in: tx) {
                    case .proven(let proven): number = proven
                    case .refused(let error): return .refused(error)
                    }
                    let step = try PhoneRules.signIn(
                        owner: try await tx.user(phoneNumber: number), reauthentication: request.reauthentication)
                    switch step {
                    case .signIn(let owner):
                        // The sign-in write: last sign-in and the new session in one statement.
                        guard let ticket = try await tx.signInWrite(request.session, as: owner, now: request.now) else {
                            throw AccountError(.unavailable, "The account is busy, retry shortly.")
                        }
                        return .signedIn(owner.signedIn(now: request.now), ticket, isNewUser: false)
                    case .create:
                        guard request.creationAdmitted else { throw NeedsAdmission() }
                        let user = UserRecord.phoneSignUp(localID: request.newLocalID, phoneNumber: number, now: request.now)
                        _ = try await tx.insertUsers([user])
                        return .signedIn(user, try await tx.insertSession(request.session, user: user, now: request.now), isNewUser: true)
                    }
                }
            } catch is NeedsAdmission {
                return .creationNeedsAdmission
            } catch let error as AccountError where attempt == 1 && error.code == .phoneNumberExists {
                continue
            }
        }
        throw AccountError(.unavailable, "The account is busy, retry shortly.")
    }

    package func linkPhone(_ request: PhoneLink) async throws -> PhoneOutcome {
        // One re-run when a concurrent link or sign-in took the number first: it is then someone
        // else's, and the answer is a temporaryProof (§A.5 link step 3).
        do {
            return try await linkPhoneOnce(request)
        } catch let error as AccountError where error.code == .phoneNumberExists {
            if case .temporaryProof = request.proof { throw error }
            return try await linkPhoneOnce(request)
        }
    }

    private func linkPhoneOnce(_ request: PhoneLink) async throws -> PhoneOutcome {
        try await transaction { tx in
            let number: String
            switch try await prove(request.proof, purpose: .signIn, now: request.now, in: tx) {
            case .proven(let proven): number = proven
            case .refused(let error): return .refused(error)
            }
            if let refusal = request.refusal { throw refusal }
            guard let who = request.caller, let caller = try await tx.user(localID: who.localID, lock: true) else {
                throw AccountError(.userNotFound)
            }
            try await tx.check(who.guardSession, user: caller)
            let owner = try await tx.user(phoneNumber: number)
            guard case .temporaryProof = request.proof else {
                if try PhoneRules.link(caller: caller, owner: owner, provenByProof: false) == .mintProof {
                    try await tx.query(
                        """
                        INSERT INTO temporary_proofs (proof_hash, tenant_id, phone_number, created_at, expires_at)
                        VALUES (\(Data(request.newProofHash)), \(tenant), \(number), \(request.now), \(request.proofExpiresAt))
                        """)
                    return .numberOwnedElsewhere(phoneNumber: number)
                }
                return try await link(caller, number, request, in: tx)
            }
            _ = try PhoneRules.link(caller: caller, owner: owner, provenByProof: true)
            return try await link(caller, number, request, in: tx)
        }
    }

    private func link(_ caller: UserRecord, _ number: String, _ request: PhoneLink, in tx: StoreTransaction) async throws -> PhoneOutcome {
        let user = PhoneRules.linked(caller, phoneNumber: number)
        try await tx.writeUser(user)
        try await tx.audit(.phoneLinked, localID: user.localID)
        return .signedIn(user, try await tx.insertSession(request.session, user: user, now: request.now), isNewUser: false)
    }

    package func inboxCodes(now: Date) async throws -> [InboxCode] {
        try await translating {
            try await onConnection { tx in
                var codes: [InboxCode] = []
                for try await (number, sessionInfo, code) in try await tx.query(
                    """
                    SELECT phone_number, inbox_session_info, inbox_code FROM phone_sessions
                    WHERE tenant_id = \(tenant) AND inbox_session_info IS NOT NULL AND used_at IS NULL AND expires_at > \(now)
                        AND attempts < \(PhoneRules.maximumAttempts)
                    ORDER BY created_at LIMIT 1000
                    """
                ).decode((String, String, String).self) {
                    codes.append(InboxCode(phoneNumber: number, sessionInfo: sessionInfo, code: code))
                }
                return codes
            }
        }
    }

    private enum Proven {
        case proven(String)
        case refused(AccountError)
    }

    /// §A.5 step 2 under the row's lock: the number a session or proof proves, spent at commit. A
    /// wrong code is counted and answered as a refusal the transaction commits, so later refusals'
    /// rollbacks cannot undo the count.
    private func prove(_ proof: PhoneProof, purpose: PhoneSessionPurpose, now: Date, in tx: StoreTransaction) async throws -> Proven {
        switch proof {
        case .session(let hash, let mac):
            let session = try await tx.lockedPhoneSession(hash: hash)
            switch try await tx.checkPhoneSession(session?.row, hash: hash, mac: mac, purpose: purpose, now: now) {
            case .success(let number): return .proven(number)
            case .failure(let error): return .refused(error)
            }
        case .temporaryProof(let hash, let presented):
            var row: TemporaryProofRow?
            for try await (number, expires, used) in try await tx.query(
                """
                SELECT phone_number, expires_at, used_at IS NOT NULL FROM temporary_proofs
                WHERE proof_hash = \(Data(hash)) AND tenant_id = \(tenant) FOR UPDATE
                """
            ).decode((String, Date, Bool).self) {
                row = TemporaryProofRow(phoneNumber: number, expiresAt: expires, used: used)
            }
            let number = try PhoneRules.check(row, phoneNumber: presented, now: now)
            try await tx.query("UPDATE temporary_proofs SET used_at = \(now) WHERE proof_hash = \(Data(hash))")
            return .proven(number)
        }
    }
}

extension StoreTransaction {
    /// Writes a verification session and, for a real number, its SMS to the outbox (§A.4 step 8).
    func insertPhoneVerification(_ session: NewPhoneSession, sms: SealedSMS?) async throws {
        try await query(
            """
            INSERT INTO phone_sessions (session_hash, tenant_id, purpose, phone_number, code_mac, test_number, created_at, expires_at,
                inbox_session_info, inbox_code)
            VALUES (\(Data(session.sessionHash)), \(tenant), \(session.purpose.rawValue), \(session.phoneNumber), \(Data(session.codeMAC)),
                \(session.testNumber), \(session.createdAt), \(session.expiresAt), \(session.inbox?.sessionInfo), \(session.inbox?.code))
            """)
        if let sms {
            try await query(
                """
                INSERT INTO sms_outbox (tenant_id, message_id, payload_sealed, kek_id, next_attempt_at, expires_at, created_at,
                    traceparent, tracestate)
                VALUES (\(tenant), \(sms.messageID), \(Data(sms.sealed)), \(sms.kekID), \(session.createdAt), \(sms.expiresAt),
                    \(session.createdAt), \(TraceContext.current?.traceparent), \(TraceContext.current?.state))
                """)
            try await query("SELECT pg_notify(\(PostgresSMSOutbox.channel), '')")
        }
    }

    /// A verification session, locked until the transaction ends, with what a second factor's
    /// session is bound to (nil: unknown).
    func lockedPhoneSession(hash: [UInt8]) async throws -> LockedPhoneSession? {
        for try await record in try await execute(Prepared.PhoneSessionForUpdate(hash: Data(hash), tenant: tenant)) {
            let (number, rawPurpose, codeMAC, attempts, expires, used, localID, pendingHash, enrollmentID) = try record.decode(
                (String, String, Data, Int32, Date, Bool, String?, Data?, String?).self)
            guard let purpose = PhoneSessionPurpose(rawValue: rawPurpose) else { return nil }
            return LockedPhoneSession(
                row: PhoneSessionRow(
                    phoneNumber: number, purpose: purpose, codeMAC: Array(codeMAC), attempts: Int(attempts), expiresAt: expires, used: used),
                localID: localID, pendingHash: pendingHash.map(Array.init), enrollmentID: enrollmentID)
        }
        return nil
    }

    /// §A.5 step 2 on a locked session (``PhoneRules/check(_:presentedMAC:purpose:now:)``): spent
    /// when the code is right, a wrong code counted (the caller commits the count with its refusal).
    func checkPhoneSession(_ row: PhoneSessionRow?, hash: [UInt8], mac: [UInt8], purpose: PhoneSessionPurpose, now: Date)
        async throws -> Result<String, AccountError>
    {
        switch PhoneRules.check(row, presentedMAC: mac, purpose: purpose, now: now) {
        case .proven(let number):
            for try await _ in try await execute(Prepared.PhoneSessionSpend(hash: Data(hash), now: now)) {}
            return .success(number)
        case .wrongCode:
            try await query("UPDATE phone_sessions SET attempts = attempts + 1 WHERE session_hash = \(Data(hash))")
            return .failure(AccountError(.invalidCode))
        case .refused(let code):
            return .failure(AccountError(code))
        }
    }
}

/// A verification session as read and locked, with what an SMS second factor's session is bound to
/// (mfa-phone-tenants.md §0.2): the user, the pending credential and the factor.
struct LockedPhoneSession {
    var row: PhoneSessionRow
    var localID: String?
    var pendingHash: [UInt8]?
    var enrollmentID: String?
}
