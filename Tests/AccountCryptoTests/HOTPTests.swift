import AccountCore
import AccountCrypto
import Testing

/// HOTP and TOTP against the RFCs' own test vectors, and the acceptance rules of
/// mfa-phone-tenants.md §B.11 around them.
@Suite("HOTP (RFC 4226) and TOTP (RFC 6238)")
struct HOTPTests {
    static let secret = Array("12345678901234567890".utf8)

    @Test("RFC 4226 appendix D: counters 0–9")
    func hotpVectors() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            #expect(HMACSHA1HOTP().code(secret: Self.secret, counter: UInt64(counter)) == code, "counter \(counter)")
        }
    }

    @Test("RFC 6238 appendix B (SHA-1), the last six of its eight digits")
    func totpVectors() {
        let vectors: [(Int64, String)] = [
            (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
            (2_000_000_000, "279037"), (20_000_000_000, "353130"),
        ]
        for (time, code) in vectors {
            let step = TOTPRules.step(at: time)
            #expect(HMACSHA1HOTP().code(secret: Self.secret, counter: UInt64(step)) == code, "t=\(time)")
            #expect(
                TOTPRules.matchingStep(code, secret: Self.secret, unixSeconds: time, window: 0, lastStep: nil, hotp: HMACSHA1HOTP()) == step
            )
        }
    }

    @Test("B.11: ±window steps accepted and one more refused; a replayed or older code refused; malformed refused")
    func window() {
        let hotp = HMACSHA1HOTP()
        let now: Int64 = 1_800_000_015
        let step = TOTPRules.step(at: now)
        func code(_ offset: Int64) -> String { hotp.code(secret: Self.secret, counter: UInt64(step + offset)) }
        func accepted(_ offset: Int64, window: Int = 5, last: Int64? = nil) -> Int64? {
            TOTPRules.matchingStep(code(offset), secret: Self.secret, unixSeconds: now, window: window, lastStep: last, hotp: hotp)
        }
        #expect(accepted(5) == step + 5 && accepted(-5) == step - 5)
        #expect(accepted(6) == nil && accepted(-6) == nil)
        #expect(accepted(0, window: 0) == step && accepted(1, window: 0) == nil)
        #expect(accepted(0, last: step) == nil, "a replayed code")
        #expect(accepted(-1, last: step) == nil, "an older code than the last one used")
        #expect(accepted(1, last: step) == step + 1)
        for bad in ["12345", "1234567", "12345a", "１２３４５６"] {
            #expect(TOTPRules.matchingStep(bad, secret: Self.secret, unixSeconds: now, window: 5, lastStep: nil, hotp: hotp) == nil)
        }
    }

    @Test("base32: RFC 4648's vectors without padding, and back")
    func base32() {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded.lowercased()) == Array(plain.utf8))
        }
        #expect(Base32.decode("MZXW6===") == Array("foo".utf8))
        #expect(Base32.decode("MZ1W") == nil)
    }

    @Test("B.1: SMS and TOTP are on only with the state and their provider; the window defaults to 5")
    func mfaConfig() {
        #expect(!MFAConfig(nil).smsEnabled && !MFAConfig(nil).totpEnabled)
        let both = MFAConfig(
            .object([
                "state": .string("MANDATORY"), "enabledProviders": .array([.string("PHONE_SMS")]),
                "providerConfigs": .array([.object(["state": .string("ENABLED"), "totpProviderConfig": .object([:])])]),
            ]))
        #expect(both.smsEnabled && both.totpEnabled && both.adjacentIntervals == 5)
        let off = MFAConfig(.object(["state": .string("DISABLED"), "enabledProviders": .array([.string("PHONE_SMS")])]))
        #expect(!off.smsEnabled)
        let narrow = MFAConfig(
            .object([
                "state": .string("ENABLED"),
                "providerConfigs": .array([
                    .object(["state": .string("ENABLED"), "totpProviderConfig": .object(["adjacentIntervals": .int(0)])])
                ]),
            ]))
        #expect(narrow.totpEnabled && !narrow.smsEnabled && narrow.adjacentIntervals == 0)
    }
}
