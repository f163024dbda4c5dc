import AccountCore
import Foundation
import Testing

/// The phone rules without a database (mfa-phone-tenants.md §A.1, §A.2, §A.5).
@Suite("Phone rules")
struct PhoneRulesTests {
    @Test("A.1: separators are dropped, one canonical form, and each refusal says what is wrong")
    func normalisation() throws {
        #expect(try PhoneNumber.normalise("+1 (555) 555-0100") == "+15555550100")
        #expect(try PhoneNumber.normalise("+44\u{00A0}20.7946.0000") == "+442079460000")
        for bad in [nil, "", "invalid", "0015555550100", "15555550100", "+1555x", "++15555550100", "+0123456789", "+1 555 ext 2"] {
            #expect(throws: AccountError(.invalidPhoneNumber, "Invalid format."), "\(bad ?? "nil")") { try PhoneNumber.normalise(bad) }
        }
        #expect(throws: AccountError(.invalidPhoneNumber, "TOO_SHORT")) { try PhoneNumber.normalise("+123") }
        #expect(throws: AccountError(.invalidPhoneNumber, "TOO_LONG")) { try PhoneNumber.normalise("+1234567890123456") }
        #expect(try PhoneNumber.normalise("+1234567") == "+1234567")
        #expect(try PhoneNumber.normalise("+123456789012345") == "+123456789012345")
        #expect(PhoneNumber.obfuscated("+15555550100") == "+*******0100")
        #expect(PhoneNumber.range(of: "+15555550100") == "+15555550")
        #expect(SMSMessage.appSignatureHash("FA+9qCX9VSu") == "FA+9qCX9VSu")
        for bad in ["FA+9qCX9VS", "FA+9qCX9VSuu", "FA 9qCX9VSu", "call me now"] { #expect(SMSMessage.appSignatureHash(bad) == nil) }
    }

    @Test("A.2: test numbers are canonical keys with six-digit codes, at most ten; regions match calling codes")
    func configuration() throws {
        let numbers = try PhoneSignInConfig.testNumbers(.object(["+1 650-555-0101": .string("123456")]))
        #expect(numbers == ["+16505550101": "123456"])
        #expect(throws: AccountError.self) { try PhoneSignInConfig.testNumbers(.object(["+16505550101": .string("12345")])) }
        #expect(throws: AccountError.self) { try PhoneSignInConfig.testNumbers(.object(["12": .string("123456")])) }
        let eleven = Dictionary(uniqueKeysWithValues: (0..<11).map { ("+1650555010\($0 % 10)\($0)", JSONValue.string("123456")) })
        #expect(throws: AccountError(.invalidConfig, "testPhoneNumbers: at most 10 entries")) {
            try PhoneSignInConfig.testNumbers(.object(eleven))
        }
        let germanOnly = try SMSRegionPolicy(.object(["allowlistOnly": .object(["allowedRegions": .array([.string("DE")])])]))
        #expect(germanOnly.admits("+4915112345678") && !germanOnly.admits("+15555550100"))
        let noCanada = try SMSRegionPolicy(.object(["allowByDefault": .object(["disallowedRegions": .array([.string("CA")])])]))
        #expect(!noCanada.admits("+15555550100"), "CA shares +1 with the US: it matches every +1 number")
        #expect(noCanada.admits("+4915112345678"))
        #expect(throws: AccountError.self) {
            try SMSRegionPolicy(.object(["allowlistOnly": .object(["allowedRegions": .array([.string("XX")])])]))
        }
        #expect(CallingCodes.regions(of: "+2125551234") == ["MA", "EH"])
    }

    @Test("A.5 step 2: a session is spent once, dies after five wrong codes and at its expiry, and keeps its purpose")
    func sessions() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let row = PhoneSessionRow(
            phoneNumber: "+15555550100", purpose: .signIn, codeMAC: [1, 2, 3], attempts: 0, expiresAt: now + 600, used: false)
        #expect(PhoneRules.check(row, presentedMAC: [1, 2, 3], purpose: .signIn, now: now) == .proven("+15555550100"))
        #expect(PhoneRules.check(row, presentedMAC: [1, 2, 4], purpose: .signIn, now: now) == .wrongCode)
        #expect(PhoneRules.check(nil, presentedMAC: [1, 2, 3], purpose: .signIn, now: now) == .refused(.invalidSessionInfo))
        #expect(PhoneRules.check(row, presentedMAC: [1, 2, 3], purpose: .mfaSignIn, now: now) == .refused(.invalidSessionInfo))
        var used = row
        used.used = true
        #expect(PhoneRules.check(used, presentedMAC: [1, 2, 3], purpose: .signIn, now: now) == .refused(.invalidSessionInfo))
        var killed = row
        killed.attempts = PhoneRules.maximumAttempts
        #expect(PhoneRules.check(killed, presentedMAC: [1, 2, 3], purpose: .signIn, now: now) == .refused(.sessionExpired))
        #expect(PhoneRules.check(row, presentedMAC: [1, 2, 3], purpose: .signIn, now: now + 600) == .refused(.sessionExpired))
        let proof = TemporaryProofRow(phoneNumber: "+15555550100", expiresAt: now + 3600, used: false)
        #expect(try PhoneRules.check(proof, phoneNumber: "+15555550100", now: now) == "+15555550100")
        #expect(throws: AccountError(.invalidTemporaryProof)) { try PhoneRules.check(proof, phoneNumber: "+15555550101", now: now) }
        #expect(throws: AccountError(.invalidTemporaryProof)) { try PhoneRules.check(proof, phoneNumber: "+15555550100", now: now + 3600) }
    }

    @Test("A.5: sign-in creates, signs in, or refuses; a link takes a free number, mints a proof for a taken one")
    func signInAndLink() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let owner = UserRecord.phoneSignUp(localID: "owner", phoneNumber: "+15555550100", now: now)
        #expect(try PhoneRules.signIn(owner: nil, reauthentication: false) == .create)
        #expect(throws: AccountError(.userNotFound)) { try PhoneRules.signIn(owner: nil, reauthentication: true) }
        #expect(try PhoneRules.signIn(owner: owner, reauthentication: true) == .signIn(owner))
        var disabled = owner
        disabled.disabled = true
        #expect(throws: AccountError(.userDisabled)) { try PhoneRules.signIn(owner: disabled, reauthentication: false) }
        let caller = UserRecord.blank(localID: "caller", now: now)
        #expect(try PhoneRules.link(caller: caller, owner: nil, provenByProof: false) == .link)
        #expect(try PhoneRules.link(caller: owner, owner: owner, provenByProof: true) == .link)
        #expect(try PhoneRules.link(caller: caller, owner: owner, provenByProof: false) == .mintProof)
        #expect(throws: AccountError(.phoneNumberExists)) { try PhoneRules.link(caller: caller, owner: owner, provenByProof: true) }
        let linked = PhoneRules.linked(caller, phoneNumber: "+15555550100")
        #expect(linked.phoneNumber == "+15555550100" && !linked.anonymous)
    }

    @Test("0.4: a PATCH replaces masked members, resets absent ones, ignores unknown paths, refuses unknown names")
    func configPatch() throws {
        let empty = try ProjectConfigDocument()
        let on = try empty.patched(
            with: [
                "signIn": .object([
                    "phoneNumber": .object(["enabled": .bool(true), "testPhoneNumbers": .object(["+16505550101": .string("123456")])])
                ])
            ],
            mask: ["signIn.phoneNumber.enabled", "signIn.phoneNumber.testPhoneNumbers", "displayName.0"])
        #expect(on.phone.enabled && on.phone.testNumbers == ["+16505550101": "123456"])
        let off = try on.patched(with: [:], mask: ["signIn.phoneNumber.enabled"])
        #expect(!off.phone.enabled && off.phone.testNumbers.count == 1, "a masked member absent from the body returns to its default")
        let replaced = try on.patched(with: ["mfa": .object(["state": .string("ENABLED")])], mask: nil)
        #expect(!replaced.phone.enabled && replaced.phone.testNumbers.isEmpty, "no mask replaces every stored member")
        #expect(throws: AccountError.self) { try empty.patched(with: ["bogus": .bool(true)], mask: nil) }
        #expect(throws: AccountError.self) { try empty.patched(with: ["mfa": .object(["state": .string("ON")])], mask: ["mfa.state"]) }
        #expect(
            throws: AccountError(.invalidAdjacentIntervalRange, "Allowed number of adjacent intervals must be between 0 and 10, inclusive")
        ) {
            try empty.patched(
                with: [
                    "mfa": .object(["providerConfigs": .array([.object(["totpProviderConfig": .object(["adjacentIntervals": .int(11)])])])])
                ],
                mask: ["mfa.providerConfigs"])
        }
    }
}
