import AccountCore
import AccountCrypto
import CSodium
import Foundation
import Testing

/// Firebase's sample parameters with `changes` applied (`nil` removes a key).
private func firebase(_ changes: [String: String?] = [:]) -> [String: String] {
    var parameters = ImportedHashVerifierTests.firebaseParameters
    for (key, value) in changes { parameters[key] = value }
    return parameters
}

/// ARGON2 parameters in bounds with `changes` applied (`nil` removes a key).
private func argon2(_ changes: [String: String?] = [:]) -> [String: String] {
    var parameters = [
        "hashType": "ARGON2_ID", "version": "VERSION_13", "iterations": "2", "memoryCostKib": "256", "parallelism": "1",
        "hashLengthBytes": "32",
    ]
    for (key, value) in changes { parameters[key] = value }
    return parameters
}

/// STANDARD_SCRYPT parameters (`nil` leaves one out).
private func standard(_ n: Int?, _ r: Int?, _ p: Int?, _ dkLen: Int?) -> [String: String] {
    let values = ["cpuMemCost": n, "blockSize": r, "parallelization": p, "dkLen": dkLen]
    return values.compactMapValues { $0.map(String.init) }
}

@Suite("imported password hashes")
struct ImportedHashVerifierTests {
    /// Firebase's published project parameters and exported user (firebase/scrypt README).
    static let firebaseParameters = [
        "signerKey": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
        "saltSeparator": "Bw==",
        "rounds": "8",
        "memoryCost": "14",
    ]
    static let firebaseUser = StoredPassword(
        algorithm: "SCRYPT",
        hash: bytes("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
        salt: bytes("42xEC+ixf3L2lw=="),
        parameters: firebaseParameters
    )

    @Test("Firebase's public scrypt vector: user1password passes, user1passwordx fails")
    func firebaseScrypt() throws {
        #expect(try ImportedHashVerifier.verify("user1password", against: Self.firebaseUser))
        #expect(try ImportedHashVerifier.verify("user1passwordx", against: Self.firebaseUser) == false)
        // URL-safe, unpadded parameters decode to the same bytes.
        var unpadded = Self.firebaseUser
        unpadded.parameters["signerKey"] = Self.firebaseParameters["signerKey"]!
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        unpadded.parameters["saltSeparator"] = "Bw"
        #expect(try ImportedHashVerifier.verify("user1password", against: unpadded))
        // The separator takes part: without it the hash is another.
        var noSeparator = Self.firebaseUser
        noSeparator.parameters["saltSeparator"] = nil
        #expect(try ImportedHashVerifier.verify("user1password", against: noSeparator) == false)
    }

    @Test("STANDARD_SCRYPT with N=1024, r=8 against Python's hashlib.scrypt and RFC 7914")
    func standardScrypt() throws {
        // hashlib.scrypt(b"pleaseletmein", salt=b"SodiumChloride", n=1024, r=8, p=1, dklen=64)
        let stored = StoredPassword(
            algorithm: "STANDARD_SCRYPT",
            hash: Self.bytes("VBc2h9Jl5DImvZFLAVJn4v3UEIqgWTf7VJ7OsMJ2ooX+WeIpP1qj/iiPDn5VJ5DapNjXnAkpRmMVKstxndIluA=="),
            salt: Array("SodiumChloride".utf8),
            parameters: ["cpuMemCost": "1024", "blockSize": "8", "parallelization": "1", "dkLen": "64"]
        )
        #expect(try ImportedHashVerifier.verify("pleaseletmein", against: stored))
        #expect(try ImportedHashVerifier.verify("pleaseletmeout", against: stored) == false)
        // RFC 7914 §12, second vector: "password" / "NaCl", N=1024, r=8, p=16.
        let rfc = StoredPassword(
            algorithm: "STANDARD_SCRYPT",
            hash: Self.hex(
                "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                    + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
            ),
            salt: Array("NaCl".utf8),
            parameters: ["cpuMemCost": "1024", "blockSize": "8", "parallelization": "16", "dkLen": "64"]
        )
        // Its p = 16 is past decision 16's p ≤ 4: refused even with the right password, at import and after it.
        #expect(try ImportedHashVerifier.verify("password", against: rfc) == false)
        var withinBounds = rfc
        withinBounds.parameters["parallelization"] = "4"
        #expect(throws: ImportParameterError(code: "INVALID_HASH_PARALLELIZATION")) {
            try ImportedHashVerifier.validateParameters(algorithm: "STANDARD_SCRYPT", parameters: rfc.parameters)
        }
        try ImportedHashVerifier.validateParameters(algorithm: "STANDARD_SCRYPT", parameters: withinBounds.parameters)
        // A stored hash of another length than dkLen never matches.
        var short = stored
        short.hash.removeLast()
        #expect(try ImportedHashVerifier.verify("pleaseletmein", against: short) == false)
    }

    @Test(
        "BCRYPT against OpenBSD, crypt_blowfish and pyca/bcrypt vectors",
        arguments: [
            ("U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
            ("U*U*U", "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a"),
            ("", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy"),
            (
                "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored",
                "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"
            ),
            ("Kk4DQuMMfZL9o", "$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"),
            ("9IeRXmnGxMYbs", "$2b$04$pQ7gRO7e6wx/936oXhNjrOUNOHL1D0h1N2IDbJZYs.1ppzSof6SPy"),
            ("xVQVbwa1S0M8r", "$2b$04$SQe9knOzepOVKoYXo9xTteNYr6MBwVz4tpriJVe3PNgYufGIsgKcW"),
            // libxcrypt's crypt(3) on this machine.
            ("correct horse battery staple", "$2b$04$abcdefghijklmnopqrstuu7EJV7kdjBBQxyb0HjTh9KS7.Lah/6CG"),
            ("pässwörd", "$2y$04$0123456789ABCDEFGHIJK.iRCDJOBSdssIqANh6Y8T7fiK/6vTgVu"),
        ]
    )
    func bcrypt(password: String, hash: String) throws {
        let stored = StoredPassword(algorithm: "BCRYPT", hash: Array(hash.utf8))
        #expect(try ImportedHashVerifier.verify(password, against: stored))
        #expect(try ImportedHashVerifier.verify(password + "x", against: stored) == (password.utf8.count >= 72))
    }

    @Test("BCRYPT strings that are malformed or too costly never match")
    func bcryptMalformed() throws {
        let good = "$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm"
        for hash in [
            good.replacingOccurrences(of: "$2b$04$", with: "$2x$04$"),
            good.replacingOccurrences(of: "$2b$04$", with: "$2b$17$"),
            good.replacingOccurrences(of: "$2b$04$", with: "$2b$03$"),
            good.replacingOccurrences(of: "$2b$04$", with: "$2b$4a$"),
            String(good.dropLast()),
            good.replacingOccurrences(of: "uO8m3YEm", with: "uO8m3YE!"),
            "",
        ] {
            let stored = StoredPassword(algorithm: "BCRYPT", hash: Array(hash.utf8))
            #expect(try ImportedHashVerifier.verify("Kk4DQuMMfZL9o", against: stored) == false)
        }
    }

    @Test("PBKDF2_SHA256 against Python's hashlib.pbkdf2_hmac")
    func pbkdf2() throws {
        // hashlib.pbkdf2_hmac("sha256", b"correct horse", b"salt-for-pbkdf2", 10000, 32)
        let stored = StoredPassword(
            algorithm: "PBKDF2_SHA256",
            hash: Self.bytes("eT7ZsQvCYI02AYD6Wi+lCuCmkuvkEPEL58y9NgGZ0gM="),
            salt: Array("salt-for-pbkdf2".utf8),
            parameters: ["rounds": "10000"]
        )
        #expect(try ImportedHashVerifier.verify("correct horse", against: stored))
        #expect(try ImportedHashVerifier.verify("correct horsf", against: stored) == false)
        var otherRounds = stored
        otherRounds.parameters["rounds"] = "9999"
        #expect(try ImportedHashVerifier.verify("correct horse", against: otherRounds) == false)
    }

    @Test("HMAC_SHA256 in both orders against Python's hmac")
    func hmac() throws {
        let key = "aG1hYy1zaWduZXIta2V5LTAxMjM0NTY3ODk="  // "hmac-signer-key-0123456789"
        // hmac.new(key, b"correct horse" + b"pepper-salt", sha256): the default order.
        let passwordFirst = StoredPassword(
            algorithm: "HMAC_SHA256",
            hash: Self.bytes("21D+Lne5TWdxoC5j+Uz2lR61/DblbChqHV2wxcoBpWw="),
            salt: Array("pepper-salt".utf8),
            parameters: ["signerKey": key]
        )
        #expect(try ImportedHashVerifier.verify("correct horse", against: passwordFirst))
        #expect(try ImportedHashVerifier.verify("correct horsf", against: passwordFirst) == false)
        var explicit = passwordFirst
        explicit.parameters["passwordHashOrder"] = "PASSWORD_AND_SALT"
        #expect(try ImportedHashVerifier.verify("correct horse", against: explicit))
        // hmac.new(key, b"pepper-salt" + b"correct horse", sha256)
        let saltFirst = StoredPassword(
            algorithm: "HMAC_SHA256",
            hash: Self.bytes("gUiY9maAdBNAQ/2yoB15Jqfo8bNaKsoAWlBmLdhfHTw="),
            salt: Array("pepper-salt".utf8),
            parameters: ["signerKey": key, "passwordHashOrder": "SALT_AND_PASSWORD"]
        )
        #expect(try ImportedHashVerifier.verify("correct horse", against: saltFirst))
        var wrongOrder = saltFirst
        wrongOrder.parameters["passwordHashOrder"] = nil
        #expect(try ImportedHashVerifier.verify("correct horse", against: wrongOrder) == false)
    }

    @Test(
        "MD5, SHA1, SHA256, SHA512 (salt first by default, repeated for rounds) against RFC 1321, FIPS 180 and hashlib",
        arguments: [
            // RFC 1321 §A.5: MD5("message digest"), salt "message " then password "digest", one round (0 means one).
            ("MD5", "digest", "message ", "0", nil, "f96b697d7cb7938d525a2f31aaf161d0"),
            ("MD5", "digest", "message ", "1", nil, "f96b697d7cb7938d525a2f31aaf161d0"),
            // FIPS 180-4 examples: the digest of "abc" as salt "a" + password "bc".
            ("SHA1", "bc", "a", "1", nil, "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ("SHA256", "bc", "a", "1", nil, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "SHA512", "bc", "a", "1", nil,
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                    + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
            ),
            // PASSWORD_AND_SALT: "ab" + "c".
            ("SHA1", "ab", "c", "1", "PASSWORD_AND_SALT", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            // d = sha256(b"NaCl" + b"hunter2").digest(); 9 × d = sha256(d).digest()
            ("SHA256", "hunter2", "NaCl", "10", nil, "7e1507e65f7234029043236fee427405c2bec380dbb3e4a5a2897f8fab71af18"),
            // d = md5(b"hunter2" + b"NaCl").digest(); 2 × d = md5(d).digest()
            ("MD5", "hunter2", "NaCl", "3", "PASSWORD_AND_SALT", "4d3c54b1ed5edaf74e21a544e9ac304c"),
        ] as [(String, String, String, String, String?, String)]
    )
    func digests(algorithm: String, password: String, salt: String, rounds: String, order: String?, hash: String) throws {
        var parameters = ["rounds": rounds]
        parameters["passwordHashOrder"] = order
        let stored = StoredPassword(algorithm: algorithm, hash: Self.hex(hash), salt: Array(salt.utf8), parameters: parameters)
        #expect(try ImportedHashVerifier.verify(password, against: stored))
        #expect(try ImportedHashVerifier.verify(password + "x", against: stored) == false)
        var otherRounds = stored
        otherRounds.parameters["rounds"] = String(max(Int(rounds)!, 1) + 1)
        #expect(try ImportedHashVerifier.verify(password, against: otherRounds) == false)
    }

    @Test("the salt separator is appended to the salt of every algorithm")
    func saltSeparator() throws {
        // sha512(b"NaCl" + b"\x07" + b"hunter2").digest()
        let stored = StoredPassword(
            algorithm: "SHA512",
            hash: Self.hex(
                "f2196019387c7e3e61ad96736c8ddef8f15d6a1a437ae2949618a9306a2f08c8"
                    + "54335ee53e4af8bb11f343ba78129869548f54c18e0ff5b487d90787bfac9cd3"
            ),
            salt: Array("NaCl".utf8), parameters: ["rounds": "1", "saltSeparator": "Bw=="]
        )
        #expect(try ImportedHashVerifier.verify("hunter2", against: stored))
        var without = stored
        without.parameters["saltSeparator"] = nil
        #expect(try ImportedHashVerifier.verify("hunter2", against: without) == false)
    }

    @Test(
        "HMAC_MD5, HMAC_SHA1 (RFC 2202) and HMAC_SHA512 (RFC 4231) test case 2",
        arguments: [
            ("HMAC_MD5", "750c783e6ab0b503eaa86e310a5db738"),
            ("HMAC_SHA1", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            (
                "HMAC_SHA512",
                "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
                    + "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
            ),
        ]
    )
    func hmacFamily(algorithm: String, hash: String) throws {
        // Key "Jefe", data "what do ya want for nothing?": the password, split from a salt in the default order.
        let stored = StoredPassword(
            algorithm: algorithm, hash: Self.hex(hash), salt: Array(" for nothing?".utf8), parameters: ["signerKey": "SmVmZQ=="]
        )
        #expect(try ImportedHashVerifier.verify("what do ya want", against: stored))
        #expect(try ImportedHashVerifier.verify("what do ya want?", against: stored) == false)
        var otherKey = stored
        otherKey.parameters["signerKey"] = "SmVmZg=="
        #expect(try ImportedHashVerifier.verify("what do ya want", against: otherKey) == false)
    }

    @Test(
        "PBKDF_SHA1 against RFC 6070",
        arguments: [
            ("1", "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
            ("2", "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
            ("4096", "4b007901b765489abead49d926f721d065a429c1"),
        ]
    )
    func pbkdfSHA1(rounds: String, hash: String) throws {
        let stored = StoredPassword(algorithm: "PBKDF_SHA1", hash: Self.hex(hash), salt: Array("salt".utf8), parameters: ["rounds": rounds])
        #expect(try ImportedHashVerifier.verify("password", against: stored))
        #expect(try ImportedHashVerifier.verify("passwore", against: stored) == false)
    }

    @Test(
        "ARGON2 against the reference implementation's published vectors (password, somesalt, t=2, m=256 KiB)",
        arguments: [
            ("ARGON2_I", "VERSION_13", "1", "89e9029f4637b295beb027056a7336c414fadd43f6b208645281cb214a56452f"),
            ("ARGON2_I", "19", "2", "4ff5ce2769a1d7f4c8a491df09d41a9fbe90e5eb02155a13e4c01e20cd4eab61"),
            ("ARGON2_I", "VERSION_10", "1", "fd4dd83d762c49bdeaf57c47bdcd0c2f1babf863fdeb490df63ede9975fccf06"),
            ("ARGON2_I", "16", "2", "b6c11560a6a9d61eac706b79a2f97d68b4463aa3ad87e00c07e2b01e90c564fb"),
            ("ARGON2_ID", "VERSION_13", "1", "9dfeb910e80bad0311fee20f9c0e2b12c17987b4cac90c2ef54d5b3021c68bfe"),
            ("ARGON2_D", "VERSION_13", "1", "25c4ee8ba448054b49efc804e478b9d823be1f9bd2e99f51d6ec4007a3a1501f"),
        ]
    )
    func argon2Vectors(type: String, version: String, parallelism: String, hash: String) throws {
        let stored = StoredPassword(
            algorithm: "ARGON2", hash: Self.hex(hash), salt: Array("somesalt".utf8),
            parameters: argon2(["hashType": type, "version": version, "parallelism": parallelism])
        )
        #expect(try ImportedHashVerifier.verify("password", against: stored))
        #expect(try ImportedHashVerifier.verify("passwore", against: stored) == false)
        var associated = stored
        associated.parameters["associatedData"] = "YWQ"
        #expect(try ImportedHashVerifier.verify("password", against: associated) == false)
    }

    @Test("ARGON2 (Argon2id) matches libsodium's independent implementation; associated data or a short salt never match")
    func argon2AgainstLibsodium() throws {
        // libsodium's crypto_pwhash: Argon2id v1.3, 16-byte salt, no associated data, t=3, m=1 MiB.
        let salt = Array("sixteen-byte-slt".utf8)
        var hash = [UInt8](repeating: 0, count: 24)
        let password = "pässwörd 🔐"
        let status = crypto_pwhash(
            &hash, UInt64(hash.count), password, UInt64(password.utf8.count), salt, 3, 1 << 20, crypto_pwhash_ALG_ARGON2ID13
        )
        try #require(status == 0)
        let stored = StoredPassword(
            algorithm: "ARGON2", hash: hash, salt: salt,
            parameters: argon2(["iterations": "3", "memoryCostKib": "1024", "hashLengthBytes": "24"])
        )
        #expect(try ImportedHashVerifier.verify(password, against: stored))
        #expect(try ImportedHashVerifier.verify("pässwörd 🔓", against: stored) == false)
        var associated = stored
        associated.parameters["associatedData"] = "YWQ"
        #expect(try ImportedHashVerifier.verify(password, against: associated) == false)
        // A salt shorter than Argon2's 8 bytes can never match, and does not throw.
        var short = stored
        short.salt = Array("short".utf8)
        #expect(try ImportedHashVerifier.verify(password, against: short) == false)
    }

    @Test("an unknown algorithm, corrupt stored parameters and a hash past today's bounds never match")
    func unknownAndCorrupt() throws {
        #expect(try ImportedHashVerifier.verify("pw", against: StoredPassword(algorithm: "SHA384", hash: [1, 2, 3])) == false)
        var corrupt = Self.firebaseUser
        corrupt.parameters["memoryCost"] = "20"
        #expect(try ImportedHashVerifier.verify("user1password", against: corrupt) == false)
        // A bcrypt cost of 15, imported before decision 16 bounded it: the user resets the password.
        let expensive = StoredPassword(
            algorithm: "BCRYPT", hash: Array("$2b$15$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm".utf8))
        #expect(ImportedHashVerifier.userFault(expensive) == "bcrypt cost 15 is above 14")
        #expect(try ImportedHashVerifier.verify("Kk4DQuMMfZL9o", against: expensive) == false)
        // PBKDF2: output blocks times rounds within 240,000 (two SHA-256 blocks at 120,000 rounds).
        let pbkdf2 = { (bytes: Int, rounds: Int) in
            StoredPassword(algorithm: "PBKDF2_SHA256", hash: Array(repeating: 1, count: bytes), parameters: ["rounds": String(rounds)])
        }
        #expect(ImportedHashVerifier.userFault(pbkdf2(64, 120_000)) == nil)
        #expect(ImportedHashVerifier.userFault(pbkdf2(65, 120_000))?.hasSuffix("asks for more than 240000 PBKDF2 blocks") == true)
        #expect(ImportedHashVerifier.userFault(pbkdf2(256, 900)) == nil)
        #expect(try ImportedHashVerifier.verify("pw", against: pbkdf2(96, 120_000)) == false)
    }

    @Test(
        "parameter faults carry Firebase's names, the first in the reference's order",
        arguments: [
            ("SHA384", [:], "INVALID_HASH_ALGORITHM"),
            ("PBKDF2_SHA1", ["rounds": "1"], "INVALID_HASH_ALGORITHM"),
            ("ARGON2ID", argon2(), "INVALID_HASH_ALGORITHM"),
            ("", [:], "INVALID_HASH_ALGORITHM"),
            ("scrypt", firebase(), "INVALID_HASH_ALGORITHM"),
            ("SCRYPT", firebase(["rounds": "9"]), "INVALID_HASH_ROUNDS"),
            ("SCRYPT", firebase(["rounds": "0", "memoryCost": "15"]), "INVALID_HASH_ROUNDS"),
            ("SCRYPT", firebase(["rounds": nil]), "INVALID_HASH_ROUNDS"),
            ("SCRYPT", firebase(["memoryCost": "15", "signerKey": "!"]), "INVALID_HASH_MEMORY_COST"),
            ("SCRYPT", firebase(["memoryCost": "0"]), "INVALID_HASH_MEMORY_COST"),
            ("SCRYPT", firebase(["signerKey": nil]), "INVALID_HASH_KEY"),
            ("SCRYPT", firebase(["signerKey": "not base64!", "saltSeparator": "%"]), "INVALID_HASH_KEY"),
            ("SCRYPT", firebase(["saltSeparator": "B"]), "INVALID_HASH_SALT_SEPARATOR"),
            ("STANDARD_SCRYPT", standard(nil, 8, 1, 64), "INVALID_HASH_CPU_MEM_COST"),
            ("STANDARD_SCRYPT", standard(1000, 8, 1, 64), "INVALID_HASH_CPU_MEM_COST"),
            ("STANDARD_SCRYPT", standard(262144, 8, 1, 64), "INVALID_HASH_CPU_MEM_COST"),
            ("STANDARD_SCRYPT", standard(1024, 17, 0, 64), "INVALID_HASH_BLOCK_SIZE"),
            ("STANDARD_SCRYPT", standard(1024, 8, 17, 0), "INVALID_HASH_PARALLELIZATION"),
            ("STANDARD_SCRYPT", standard(1024, 8, 1, 129), "INVALID_HASH_DERIVED_KEY_LENGTH"),
            ("STANDARD_SCRYPT", standard(65536, 1, 1, 64), "INVALID_HASH_CPU_MEM_COST"),
            // Decision 16: 128·N·r·p ≤ 64 MiB and p ≤ 4, so a guess costs a few native verifications.
            ("STANDARD_SCRYPT", standard(131072, 8, 1, 64), "INVALID_HASH_CPU_MEM_COST"),
            ("STANDARD_SCRYPT", standard(65536, 8, 2, 64), "INVALID_HASH_CPU_MEM_COST"),
            ("STANDARD_SCRYPT", standard(1024, 8, 5, 64), "INVALID_HASH_PARALLELIZATION"),
            ("STANDARD_SCRYPT", standard(131072, 16, 16, 128), "INVALID_HASH_PARALLELIZATION"),
            ("PBKDF2_SHA256", [:], "INVALID_HASH_ROUNDS"),
            ("PBKDF2_SHA256", ["rounds": "120001"], "INVALID_HASH_ROUNDS"),
            ("PBKDF2_SHA256", ["rounds": "ten"], "INVALID_HASH_ROUNDS"),
            ("HMAC_SHA256", [:], "INVALID_HASH_KEY"),
            ("HMAC_SHA256", ["signerKey": ""], "INVALID_HASH_KEY"),
            ("HMAC_MD5", [:], "INVALID_HASH_KEY"),
            ("HMAC_SHA512", ["rounds": "1"], "INVALID_HASH_KEY"),
            ("SHA1", [:], "INVALID_HASH_ROUNDS"),
            ("SHA1", ["rounds": "0"], "INVALID_HASH_ROUNDS"),
            ("SHA512", ["rounds": "8193"], "INVALID_HASH_ROUNDS"),
            ("MD5", ["rounds": "-1"], "INVALID_HASH_ROUNDS"),
            ("MD5", ["rounds": "1", "saltSeparator": "B"], "INVALID_HASH_SALT_SEPARATOR"),
            ("PBKDF_SHA1", ["rounds": "120001"], "INVALID_HASH_ROUNDS"),
            ("ARGON2", argon2(["hashType": nil]), "INVALID_HASH_ALGORITHM"),
            ("ARGON2", argon2(["hashType": "ARGON2_X"]), "INVALID_HASH_ALGORITHM"),
            ("ARGON2", argon2(["version": "VERSION_12"]), "INVALID_HASH_ALGORITHM"),
            ("ARGON2", argon2(["iterations": "17"]), "INVALID_HASH_ROUNDS"),
            ("ARGON2", argon2(["iterations": nil]), "INVALID_HASH_ROUNDS"),
            ("ARGON2", argon2(["parallelism": "0"]), "INVALID_HASH_PARALLELIZATION"),
            ("ARGON2", argon2(["memoryCostKib": "32769"]), "INVALID_HASH_MEMORY_COST"),
            ("ARGON2", argon2(["memoryCostKib": "15", "parallelism": "2"]), "INVALID_HASH_MEMORY_COST"),
            ("ARGON2", argon2(["hashLengthBytes": "3"]), "INVALID_HASH_DERIVED_KEY_LENGTH"),
            // Decision 16: memory × passes ≤ 128 MiB.
            ("ARGON2", argon2(["memoryCostKib": "32768", "iterations": "5"]), "INVALID_HASH_ROUNDS"),
            ("ARGON2", argon2(["memoryCostKib": "16384", "iterations": "16"]), "INVALID_HASH_ROUNDS"),
            ("ARGON2", argon2(["hashLengthBytes": "1025"]), "INVALID_HASH_DERIVED_KEY_LENGTH"),
        ] as [(String, [String: String], String)]
    )
    func parameterFaults(algorithm: String, parameters: [String: String], code: String) {
        #expect(throws: ImportParameterError(code: code)) {
            try ImportedHashVerifier.validateParameters(algorithm: algorithm, parameters: parameters)
        }
    }

    @Test(
        "parameters in bounds pass validation",
        arguments: [
            ("SCRYPT", firebase()),
            ("SCRYPT", firebase(["saltSeparator": nil, "rounds": "1", "memoryCost": "1"])),
            ("STANDARD_SCRYPT", standard(65536, 8, 1, 128)),
            ("STANDARD_SCRYPT", standard(16384, 8, 4, 64)),
            ("STANDARD_SCRYPT", standard(2, 1, 1, 1)),
            ("BCRYPT", [:]),
            ("PBKDF2_SHA256", ["rounds": "120000"]),
            ("PBKDF2_SHA256", ["rounds": "1"]),
            ("HMAC_SHA256", ["signerKey": "a2V5", "passwordHashOrder": "SALT_AND_PASSWORD"]),
            ("HMAC_MD5", ["signerKey": "a2V5"]),
            ("MD5", ["rounds": "0"]),
            ("SHA256", ["rounds": "8192", "passwordHashOrder": "PASSWORD_AND_SALT"]),
            ("PBKDF_SHA1", ["rounds": "1"]),
            ("ARGON2", argon2()),
            ("ARGON2", argon2(["version": "16", "hashType": "ARGON2_D", "memoryCostKib": "32768", "parallelism": "16"])),
            ("ARGON2", argon2(["memoryCostKib": "32768", "iterations": "4"])),
            ("ARGON2", argon2(["memoryCostKib": "8192", "iterations": "16"])),
            ("ARGON2", argon2(["version": nil, "hashLengthBytes": "1024", "associatedData": "YWQ"])),
        ] as [(String, [String: String])]
    )
    func parametersInBounds(algorithm: String, parameters: [String: String]) throws {
        try ImportedHashVerifier.validateParameters(algorithm: algorithm, parameters: parameters)
    }

    @Test(
        "decision 16: a wrong password against an imported hash cheaper than a native one is answered only after a native verification's time; a right one, or a costly hash, is not held"
    )
    func cheapImportedHashesTakeANativeVerification() async throws {
        let hasher = Argon2idHasher(parameters: .init(memoryKiB: 1024, iterations: 1), threads: 1)
        // RFC 1321: MD5("message digest"), salt "message ", password "digest".
        let md5 = StoredPassword(
            algorithm: "MD5", hash: Self.hex("f96b697d7cb7938d525a2f31aaf161d0"), salt: Array("message ".utf8), parameters: ["rounds": "0"])
        let native = hasher.nativeVerifications
        #expect(try await hasher.verify("digest", against: md5))
        #expect(hasher.paddedVerifications == 0, "a right password costs what it costs, then is upgraded")
        #expect(try await hasher.verify("digesT", against: md5) == false)
        #expect(hasher.paddedVerifications == 1, "a wrong one is held for a native verification's time")
        #expect(hasher.nativeVerifications == native, "held, not computed: the pool does no more work")
        // Firebase's scrypt (16 MiB, 8 rounds) costs more than this hasher's native 1 MiB: nothing added.
        #expect(try await hasher.verify("user1passwordx", against: Self.firebaseUser) == false)
        #expect(hasher.paddedVerifications == 1)
        // An unknown account spends a real native verification.
        _ = try await hasher.dummyVerify("anything")
        #expect(hasher.nativeVerifications == native + 1)
        #expect(ImportedHashVerifier.estimatedWorkKiB(md5) == 0)
        #expect(ImportedHashVerifier.estimatedWorkKiB(Self.firebaseUser) == 65536)
    }

    @Test("Argon2idHasher.verify routes imported credentials to the verifier on its pool")
    func hasherRoutesImported() async throws {
        let hasher = Argon2idHasher(parameters: .init(memoryKiB: 1024, iterations: 1), threads: 2)
        #expect(try await hasher.verify("user1password", against: Self.firebaseUser))
        #expect(try await hasher.verify("user1passwordx", against: Self.firebaseUser) == false)
        let bcrypt = StoredPassword(algorithm: "BCRYPT", hash: Array("$2b$04$cVWp4XaNU8a4v1uMRum2SO026BWLIoQMD/TXg5uZV.0P.uO8m3YEm".utf8))
        #expect(try await hasher.verify("Kk4DQuMMfZL9o", against: bcrypt))
        #expect(try await hasher.verify("pw", against: StoredPassword(algorithm: "SHA384", hash: [1])) == false)
        var corrupt = Self.firebaseUser
        corrupt.parameters["signerKey"] = nil
        #expect(try await hasher.verify("user1password", against: corrupt) == false)
        // Concurrent imported verifications all complete on the bounded pool.
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<6 {
                group.addTask { try await hasher.verify(index.isMultiple(of: 2) ? "user1password" : "nope", against: Self.firebaseUser) }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 3)
        // Native credentials still verify as before.
        #expect(try await hasher.verify("native", against: try await hasher.hash("native")))
    }

    private static func bytes(_ base64: String) -> [UInt8] {
        Array(Data(base64Encoded: base64)!)
    }

    private static func hex(_ text: String) -> [UInt8] {
        var output = [UInt8]()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            output.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return output
    }
}
