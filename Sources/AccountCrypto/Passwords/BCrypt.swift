import AccountCore

/// bcrypt (EksBlowfish, Provos and Mazières 1999) as OpenBSD and crypt_blowfish compute it, for verifying imported
/// `$2a$`, `$2b$` and `$2y$` hashes. Verification only: new credentials are argon2id.
///
/// The password's bytes and a terminating NUL form the key, cut at 72 bytes (so `$2a$`, `$2b$` and `$2y$` agree;
/// OpenBSD's old `$2a$` wrapped lengths past 255, which no importer relies on).
enum BCrypt {
    /// The lowest cost bcrypt defines.
    static let minimumCost = 4
    /// The highest cost accepted, on import and at verification (each step doubles the work; 14 is about 1.2 s of
    /// one core, federation-and-limits.md decision 16).
    static let maximumCost = 14

    /// The cost a bcrypt string names, whatever it is; nil when the string is not one.
    static func cost(of hash: [UInt8]) -> Int? {
        guard hash.count == 60, hash[0] == UInt8(ascii: "$"), hash[3] == UInt8(ascii: "$"), hash[6] == UInt8(ascii: "$") else {
            return nil
        }
        let digits = hash[4..<6].map { Int($0) - Int(UInt8(ascii: "0")) }
        guard digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
        return digits[0] * 10 + digits[1]
    }

    /// Whether `password` produces `hash`, the 60 characters `$2b$CC$<22 salt><31 digest>`. A malformed string, another
    /// variant or a cost outside 4–16 is `false`.
    static func verify(_ password: [UInt8], hash: [UInt8]) -> Bool {
        guard let parsed = Parsed(hash) else { return false }
        let computed = digest(password: password, salt: parsed.salt, cost: parsed.cost)
        return ConstantTime.equal(computed, parsed.digest)
    }

    /// The 23 bytes a bcrypt string keeps: `OrpheanBeholderScryDoubt` encrypted 64 times under the EksBlowfish state.
    static func digest(password: [UInt8], salt: [UInt8], cost: Int) -> [UInt8] {
        precondition(salt.count == 16 && (minimumCost...maximumCost).contains(cost))
        let keyWords = streamWords(Array((password + [0]).prefix(72)), count: 18)
        let saltKeyWords = streamWords(salt, count: 18)
        let saltWords = streamWords(salt, count: 4)
        var text = streamWords(Array("OrpheanBeholderScryDoubt".utf8), count: 6)
        var state = piWords
        state.withUnsafeMutableBufferPointer { buffer in
            let state = buffer.baseAddress!
            keyWords.withUnsafeBufferPointer { key in
                saltKeyWords.withUnsafeBufferPointer { saltKey in
                    saltWords.withUnsafeBufferPointer { salt in
                        expand(state, key: key.baseAddress!, salt: salt.baseAddress!)
                        for _ in 0..<(1 << cost) {
                            expand(state, key: key.baseAddress!, salt: nil)
                            expand(state, key: saltKey.baseAddress!, salt: nil)
                        }
                    }
                }
            }
            for _ in 0..<64 {
                for index in stride(from: 0, to: 6, by: 2) {
                    var (left, right) = (text[index], text[index + 1])
                    encrypt(state, &left, &right)
                    (text[index], text[index + 1]) = (left, right)
                }
            }
        }
        var output = [UInt8]()
        output.reserveCapacity(24)
        for word in text {
            output += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8)]
            output.append(UInt8(truncatingIfNeeded: word))
        }
        return Array(output.prefix(23))
    }

    /// The parts of a modular crypt string.
    private struct Parsed {
        var cost: Int
        var salt: [UInt8]
        var digest: [UInt8]

        init?(_ hash: [UInt8]) {
            let variants: Set<UInt8> = [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")]
            guard hash.count == 60, hash[1] == UInt8(ascii: "2"), variants.contains(hash[2]), let cost = BCrypt.cost(of: hash) else {
                return nil
            }
            self.cost = cost
            guard (BCrypt.minimumCost...BCrypt.maximumCost).contains(cost),
                let salt = BCrypt.decodeRadix64(hash[7..<29], byteCount: 16),
                let digest = BCrypt.decodeRadix64(hash[29..<60], byteCount: 23)
            else { return nil }
            self.salt = salt
            self.digest = digest
        }
    }

    /// bcrypt's base64: standard bit order, alphabet `./A-Za-z0-9`, no padding; spare low bits ignored.
    private static func decodeRadix64(_ characters: ArraySlice<UInt8>, byteCount: Int) -> [UInt8]? {
        var output = [UInt8]()
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = radix64Value(character) else { return nil }
            accumulator = (accumulator << 6 | value) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output.count >= byteCount ? Array(output.prefix(byteCount)) : nil
    }

    private static func radix64Value(_ character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "."): 0
        case UInt8(ascii: "/"): 1
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A")) + 2
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 28
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 54
        default: nil
        }
    }

    /// `count` big-endian words read cyclically from `bytes` (OpenBSD's `Blowfish_stream2word`).
    private static func streamWords(_ bytes: [UInt8], count: Int) -> [UInt32] {
        var index = 0
        return (0..<count).map { _ in
            var word: UInt32 = 0
            for _ in 0..<4 {
                word = word << 8 | UInt32(bytes[index])
                index = (index + 1) % bytes.count
            }
            return word
        }
    }

    /// ExpandKey: XOR the key stream into P, then re-encrypt the whole state (P, then the S-boxes) in chain, mixing in
    /// the salt's four words cyclically when there is a salt.
    private static func expand(_ state: UnsafeMutablePointer<UInt32>, key: UnsafePointer<UInt32>, salt: UnsafePointer<UInt32>?) {
        for index in 0..<18 { state[index] ^= key[index] }
        var left: UInt32 = 0
        var right: UInt32 = 0
        var saltIndex = 0
        var index = 0
        while index < 1042 {
            if let salt {
                left ^= salt[saltIndex]
                right ^= salt[saltIndex + 1]
                saltIndex ^= 2
            }
            encrypt(state, &left, &right)
            state[index] = left
            state[index + 1] = right
            index += 2
        }
    }

    /// One Blowfish block: 16 Feistel rounds under P (`state[0..<18]`) and the S-boxes (`state[18...]`).
    @inline(__always)
    private static func encrypt(_ state: UnsafeMutablePointer<UInt32>, _ left: inout UInt32, _ right: inout UInt32) {
        let boxes = state + 18
        var xl = left ^ state[0]
        var xr = right
        var round = 1
        while round < 17 {
            xr ^= feistel(boxes, xl) ^ state[round]
            xl ^= feistel(boxes, xr) ^ state[round + 1]
            round += 2
        }
        left = xr ^ state[17]
        right = xl
    }

    @inline(__always)
    private static func feistel(_ boxes: UnsafeMutablePointer<UInt32>, _ x: UInt32) -> UInt32 {
        let a = boxes[Int(x >> 24)]
        let b = boxes[256 + Int((x >> 16) & 0xFF)]
        let c = boxes[512 + Int((x >> 8) & 0xFF)]
        let d = boxes[768 + Int(x & 0xFF)]
        return ((a &+ b) ^ c) &+ d
    }
}
