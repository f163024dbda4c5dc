package import AccountCore
package import Foundation
import PostgresNIO

/// Second factors (mfa-phone-tenants.md §B): each finalizing call one transaction that locks the
/// one-time row (SMS session, TOTP enrolment or pending credential) and then the user, re-checks
/// what the request was decided on, and writes the factor or the session. Counted failures commit.
extension PostgresAccountStore: MFAStore {
    package func createPending(_ pending: NewPendingCredential, for read: UserRecord, upgradedPassword: StoredPassword?) async throws {
        try await transaction { tx in
            guard let user = try await tx.user(localID: read.localID, lock: true) else { throw AccountError(.userNotFound) }
            if user.credentialVersion != read.credentialVersion { throw AccountError(.invalidPassword) }
            if user.disabled { throw AccountError(.userDisabled) }
            if let upgradedPassword, let credential = user.password {
                try await tx.writePassword(upgradedPassword, localID: user.localID, now: credential.updatedAt)
            }
            try await tx.insertPending(pending)
        }
    }

    package func pending(hash: [UInt8]) async throws -> PendingCredentialRow? {
        try await translating {
            try await onConnection { tx in try await tx.pending(hash: hash, lock: false) }
        }
    }

    package func pendingFailed(hash: [UInt8]) async throws {
        try await translating {
            try await onConnection { tx in
                try await tx.query("UPDATE mfa_pending SET failures = failures + 1 WHERE pending_hash = \(Data(hash))")
            }
        }
    }

    package func totpSecret(localID: String, enrollmentID: String) async throws -> SealedTOTPSecret? {
        try await translating {
            try await onConnection { tx in
                for try await row in try await tx.execute(Prepared.TOTPSecret(tenant: tenant, localID: localID, enrollmentID: enrollmentID))
                {
                    let (sealed, lastStep) = try row.decode((Data, Int64?).self)
                    return SealedTOTPSecret(sealed: Array(sealed), lastStep: lastStep)
                }
                return nil
            }
        }
    }

    package func reserveGuess(localID: String, enrollmentID: String, now: Date) async throws -> Bool {
        try await translating {
            try await onConnection { tx in
                for try await _ in try await tx.execute(
                    Prepared.FactorGuessReserve(tenant: tenant, localID: localID, enrollmentID: enrollmentID, now: now))
                {
                    return true
                }
                return false
            }
        }
    }

    package func startTOTPEnrollment(_ enrollment: NewTOTPEnrollment) async throws {
        try await translating {
            try await onConnection { tx in
                try await tx.query(
                    """
                    INSERT INTO totp_enrollments (session_hash, tenant_id, local_id, secret_sealed, kek_id, created_at, expires_at)
                    VALUES (\(Data(enrollment.hash)), \(tenant), \(enrollment.localID), \(Data(enrollment.sealedSecret)), \(enrollment.kekID),
                        \(enrollment.createdAt), \(enrollment.expiresAt))
                    """)
            }
        }
    }

    package func totpEnrollment(hash: [UInt8]) async throws -> TOTPEnrollmentRow? {
        try await translating {
            try await onConnection { tx in
                for try await (localID, sealed, attempts, expires, used) in try await tx.query(
                    """
                    SELECT local_id, secret_sealed, attempts, expires_at, used_at IS NOT NULL FROM totp_enrollments
                    WHERE session_hash = \(Data(hash)) AND tenant_id = \(tenant)
                    """
                ).decode((String, Data, Int32, Date, Bool).self) {
                    return TOTPEnrollmentRow(
                        localID: localID, sealedSecret: Array(sealed), attempts: Int(attempts), expiresAt: expires, used: used)
                }
                return nil
            }
        }
    }

    package func totpEnrollmentFailed(hash: [UInt8]) async throws {
        try await translating {
            try await onConnection { tx in
                try await tx.query("UPDATE totp_enrollments SET attempts = attempts + 1 WHERE session_hash = \(Data(hash))")
            }
        }
    }

    package func startSMSChallenge(_ session: NewPhoneSession, binding: SMSChallengeBinding, sms: SealedSMS?) async throws {
        let hash = Data(session.sessionHash)
        try await transaction { tx in
            try await tx.insertPhoneVerification(session, sms: sms)
            switch binding {
            case .enrollment(let localID):
                try await tx.query("UPDATE phone_sessions SET local_id = \(localID) WHERE session_hash = \(hash)")
            case .signIn(let pendingHash, let localID, let enrollmentID):
                try await tx.query(
                    """
                    UPDATE phone_sessions SET local_id = \(localID), pending_hash = \(Data(pendingHash)), enrollment_id = \(enrollmentID)
                    WHERE session_hash = \(hash)
                    """)
            }
        }
    }

    package func enroll(_ request: EnrollmentWrite) async throws -> MFAOutcome {
        try await transaction { tx in
            let now = request.now
            var factor = MFAFactor(enrollmentID: request.enrollmentID, kind: .phone, displayName: request.displayName, enrolledAt: now)
            var sealed: (secret: [UInt8], kekID: String, step: Int64)?
            switch request.proof {
            case .sms(let hash, let mac):
                let session = try await tx.lockedPhoneSession(hash: hash)
                guard let session, session.row.purpose == .mfaEnrollment, session.localID == request.localID else {
                    return .refused(AccountError(.invalidSessionInfo))
                }
                if session.row.used {
                    let user = try await tx.user(localID: request.localID, lock: false)
                    if user?.factors.contains(where: { $0.phoneNumber == session.row.phoneNumber }) == true {
                        return .refused(Self.secondFactorExists)
                    }
                    return .refused(AccountError(.invalidSessionInfo))
                }
                switch try await tx.checkPhoneSession(session.row, hash: hash, mac: mac, purpose: .mfaEnrollment, now: now) {
                case .failure(let error): return .refused(error)
                case .success(let number): factor.phoneNumber = number
                }
            case .totpEnrollment(let hash, let secret, let kekID, let step):
                var spent = false
                for try await _ in try await tx.query(
                    """
                    UPDATE totp_enrollments SET used_at = \(now)
                    WHERE session_hash = \(Data(hash)) AND tenant_id = \(tenant) AND local_id = \(request.localID) AND used_at IS NULL
                        AND attempts < \(MFAService.maximumFailures) AND expires_at > \(now)
                    RETURNING 1
                    """)
                {
                    spent = true
                }
                guard spent else { return .refused(AccountError(.tooManyEnrollmentAttempts, "restart enrollment")) }
                factor.kind = .totp
                sealed = (secret, kekID, step)
            case .totp:
                throw AccountError(.unavailable, "a TOTP sign-in proof cannot enrol a factor")
            }
            guard let user = try await tx.user(localID: request.localID, lock: true) else { throw AccountError(.userNotFound) }
            if user.disabled { throw AccountError(.userDisabled) }
            try await tx.check(request.guardSession, user: user)
            try MFAService.checkRoom(for: factor.kind, in: user)
            if let number = factor.phoneNumber, user.factors.contains(where: { $0.phoneNumber == number }) {
                throw Self.secondFactorExists
            }
            try await tx.insertFactor(factor, localID: user.localID, sealed: sealed)
            var after = try await tx.bumpCredentialVersion(user)
            after.factors.append(factor)
            after.validSince = try await tx.revokeAll(user: after, reason: .mfaEnrolled, now: now).validSince
            after.tokensValidAfter = now
            let ticket = try await tx.insertSession(request.session, user: after, now: now)
            if let notice = request.notice { try await tx.insert(notice) }
            try await tx.audit(
                .mfaEnrolled, localID: user.localID, details: ["enrollmentId": factor.enrollmentID, "kind": factor.kind.rawValue])
            return .signedIn(after, ticket, secondFactor: request.session.secondFactor)
        }
    }

    package func completeSignIn(_ request: SecondFactorSignIn) async throws -> MFAOutcome {
        try await transaction { tx in
            let now = request.now
            guard let pending = try await tx.pending(hash: request.pendingHash, lock: true), !pending.used,
                pending.failures < MFAService.maximumFailures, pending.expiresAt > now
            else { return .refused(AccountError(.invalidPendingToken)) }
            var session = request.session
            switch request.proof {
            case .sms(let hash, let mac):
                let phoneSession = try await tx.lockedPhoneSession(hash: hash)
                guard let phoneSession, phoneSession.row.purpose == .mfaSignIn, !phoneSession.row.used,
                    phoneSession.pendingHash == request.pendingHash, let enrollmentID = phoneSession.enrollmentID
                else { return .refused(AccountError(.invalidSessionInfo)) }
                // The factor's guess, taken before the code is compared; the row's lock holds
                // parallel guesses at this factor until this one is counted (§B.9 step 4).
                var reserved = false
                for try await _ in try await tx.execute(
                    Prepared.FactorGuessReserve(tenant: tenant, localID: pending.localID, enrollmentID: enrollmentID, now: now))
                {
                    reserved = true
                }
                guard reserved else { return .refused(FactorGuesses.exhausted) }
                switch try await tx.checkPhoneSession(phoneSession.row, hash: hash, mac: mac, purpose: .mfaSignIn, now: now) {
                case .failure(let error):
                    if error.code == .invalidCode {
                        try await tx.query(
                            "UPDATE mfa_pending SET failures = failures + 1 WHERE pending_hash = \(Data(request.pendingHash))")
                    }
                    return .refused(error)
                case .success:
                    session.secondFactor = SecondFactorClaim(kind: .phone, enrollmentID: enrollmentID)
                }
            case .totp:
                break  // written below, after the user's lock (the order withdrawal locks in)
            case .totpEnrollment:
                throw AccountError(.unavailable, "an enrolment proof cannot complete a sign-in")
            }
            guard let user = try await tx.user(localID: pending.localID, lock: true) else { throw AccountError(.userNotFound) }
            try MFAService.check(pending, against: user)
            guard let factorID = session.secondFactor?.enrollmentID, user.factors.contains(where: { $0.enrollmentID == factorID }) else {
                throw AccountError(.invalidMFAEnrollmentID)
            }
            if case .totp(let enrollmentID, let step) = request.proof {
                var advanced = false
                for try await _ in try await tx.execute(
                    Prepared.TOTPSignInWrite(
                        tenant: tenant, localID: user.localID, enrollmentID: enrollmentID, step: step,
                        pendingHash: Data(request.pendingHash),
                        now: now))
                {
                    advanced = true
                }
                // A concurrent use of the same step (or a newer one) won: this code is a replay now.
                guard advanced else { return .refused(AccountError(.invalidCode)) }
            } else {
                for try await _ in try await tx.execute(
                    Prepared.MFAPendingSpend(
                        hash: Data(request.pendingHash), tenant: tenant, localID: user.localID, enrollmentID: factorID, now: now))
                {}
            }
            var signedIn = user
            signedIn.lastLoginAt = now
            return .signedIn(signedIn, try await tx.insertSession(session, user: signedIn, now: now), secondFactor: session.secondFactor)
        }
    }

    package func withdraw(_ request: FactorWithdrawal) async throws -> MFAOutcome {
        try await transaction { tx in
            let now = request.now
            guard let user = try await tx.user(localID: request.localID, lock: true) else { throw AccountError(.userNotFound) }
            if user.disabled { throw AccountError(.userDisabled) }
            try await tx.check(request.guardSession, user: user)
            guard user.factors.contains(where: { $0.enrollmentID == request.enrollmentID }) else {
                throw AccountError(.mfaEnrollmentNotFound)
            }
            var after = try await tx.removeFactor(request.enrollmentID, from: user)
            after.validSince = try await tx.revokeAll(user: after, reason: .mfaWithdrawn, now: now).validSince
            after.tokensValidAfter = now
            let ticket = try await tx.insertSession(request.session, user: after, now: now)
            if let notice = request.notice { try await PostgresOutbox.enqueue(notice, on: tx.connection, logger: tx.logger) }
            try await tx.audit(.mfaWithdrawn, localID: user.localID, details: ["enrollmentId": request.enrollmentID])
            return .signedIn(after, ticket, secondFactor: request.session.secondFactor)
        }
    }

    static let secondFactorExists = AccountError(.secondFactorExists, "Phone number already enrolled as second factor for this account.")
}

extension StoreTransaction {
    func insertPending(_ pending: NewPendingCredential) async throws {
        try await query(
            """
            INSERT INTO mfa_pending (pending_hash, tenant_id, local_id, sign_in_provider, sign_in_method, sign_in_attributes,
                credential_version, created_at, expires_at)
            VALUES (\(Data(pending.hash)), \(tenant), \(pending.localID), \(pending.provider), \(pending.method), \(pending.signInAttributes),
                \(pending.credentialVersion), \(pending.createdAt), \(pending.expiresAt))
            """)
    }

    func pending(hash: [UInt8], lock: Bool) async throws -> PendingCredentialRow? {
        let rows =
            lock
            ? try await execute(Prepared.MFAPendingForUpdate(hash: Data(hash), tenant: tenant))
            : try await execute(Prepared.MFAPending(hash: Data(hash), tenant: tenant))
        for try await row in rows {
            let (localID, provider, method, attributes, version, failures, created, expires, used) = try row.decode(
                (String, String, String, String?, Int64, Int32, Date, Date, Bool).self)
            return PendingCredentialRow(
                localID: localID, provider: provider, method: method, signInAttributes: attributes, credentialVersion: version,
                failures: Int(failures), createdAt: created, expiresAt: expires, used: used)
        }
        return nil
    }

    func insertFactor(_ factor: MFAFactor, localID: String, sealed: (secret: [UInt8], kekID: String, step: Int64)?) async throws {
        try await query(
            """
            INSERT INTO mfa_factors (tenant_id, local_id, enrollment_id, kind, display_name, phone_number, secret_sealed, kek_id, last_step,
                enrolled_at)
            VALUES (\(tenant), \(localID), \(factor.enrollmentID), \(factor.kind.rawValue), \(factor.displayName), \(factor.phoneNumber),
                \(sealed.map { Data($0.secret) }), \(sealed?.kekID), \(sealed?.step), \(factor.enrolledAt))
            """)
    }

    /// A new credential version for a locked user: pending credentials issued before die (§0.3).
    func bumpCredentialVersion(_ user: UserRecord) async throws -> UserRecord {
        try await query(
            "UPDATE users SET credential_version = credential_version + 1 WHERE tenant_id = \(tenant) AND local_id = \(user.localID)")
        var after = user
        after.credentialVersion += 1
        return after
    }

    /// Deletes one factor of a locked user and moves its credential version.
    func removeFactor(_ enrollmentID: String, from user: UserRecord) async throws -> UserRecord {
        try await query(
            "DELETE FROM mfa_factors WHERE tenant_id = \(tenant) AND local_id = \(user.localID) AND enrollment_id = \(enrollmentID)")
        var after = try await bumpCredentialVersion(user)
        after.factors.removeAll { $0.enrollmentID == enrollmentID }
        return after
    }
}
