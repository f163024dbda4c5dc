import Foundation

/// Email addresses as identity-toolkit.md §1.5 defines them: stored and compared lower-case, at most 254
/// characters, one `@`, a local part of 1–64 characters, a host name for a domain.
package enum EmailAddress {
    /// The canonical (lower-case, NFC) address, or `nil` when it is not valid.
    package static func normalize(_ raw: String) -> String? {
        // Almost every address is ASCII, where NFC is the identity and the checks are byte checks:
        // the Unicode path costs ~4% of an admin lookup's CPU.
        if raw.utf8.allSatisfy({ $0 < 0x80 }) { return normalizeASCII(raw) }
        return normalizeUnicode(raw)
    }

    /// `normalize` for ASCII input, byte by byte; the same answers as `normalizeUnicode`.
    package static func normalizeASCII(_ raw: String) -> String? {
        var bytes = Array(raw.utf8)
        guard !bytes.isEmpty, bytes.count <= 254 else { return nil }
        var at: Int?
        for index in bytes.indices {
            let byte = bytes[index]
            // Controls, DEL and the ASCII white space (the space itself is 0x20).
            guard byte > 0x20, byte != 0x7F else { return nil }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { bytes[index] = byte + 0x20 }
            if byte == UInt8(ascii: "@") {
                guard at == nil else { return nil }
                at = index
            }
        }
        guard let at, (1...64).contains(at) else { return nil }
        let host = bytes[(at + 1)...]
        guard host.count <= 253 else { return nil }
        let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return nil }
        for label in labels {
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else { return nil }
            for byte in label {
                let isAlphanumeric =
                    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                guard isAlphanumeric || byte == UInt8(ascii: "-") else { return nil }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `normalize` for any input: NFC, lower case, then the checks on characters.
    package static func normalizeUnicode(_ raw: String) -> String? {
        let email = raw.precomposedStringWithCanonicalMapping.lowercased()
        guard !email.isEmpty, email.count <= 254,
            !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...64).contains(parts[0].count), isHostName(parts[1]) else { return nil }
        return email
    }

    /// A DNS host name: dot-separated labels of 1–63 letters, digits or hyphens (IDN letters too),
    /// not starting or ending with a hyphen, at least two labels.
    package static func isHostName(_ host: Substring) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, host.count <= 253 else { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        }
    }
}

/// User ids: generated ones are 28 alphanumerics (as Firebase's); admin-chosen ones 1–128 printable
/// ASCII characters without spaces.
package enum LocalID {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// A new random id.
    package static func generate(_ random: any RandomSource) -> String {
        random.string(count: 28, alphabet: alphabet)
    }

    /// Whether an admin-chosen id is acceptable.
    package static func isValid(_ id: String) -> Bool {
        (1...128).contains(id.count) && id.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}

/// Profile attributes as production bounds them: `displayName` at most 256 UTF-16 code units,
/// `photoUrl` at most 2048, neither holding a control character (a NUL would reach PostgreSQL).
package enum ProfileAttribute {
    /// The longest display name, in UTF-16 code units (as the SDKs and production count).
    package static let displayNameLimit = 256
    /// The longest photo URL, in UTF-16 code units.
    package static let photoURLLimit = 2048

    /// `INVALID_PROFILE_ATTRIBUTE : Display name too long.` and the like.
    package static func checkDisplayName(_ value: String) throws(AccountError) {
        try check(value, limit: displayNameLimit, name: "Display name")
    }

    /// `INVALID_PROFILE_ATTRIBUTE : Photo URL too long.` and the like.
    package static func checkPhotoURL(_ value: String) throws(AccountError) {
        try check(value, limit: photoURLLimit, name: "Photo URL")
    }

    private static func check(_ value: String, limit: Int, name: String) throws(AccountError) {
        guard value.utf16.count <= limit else { throw AccountError(.invalidProfileAttribute, "\(name) too long.") }
        guard !containsControl(value) else { throw AccountError(.invalidProfileAttribute, "\(name) contains a control character.") }
    }

    /// Whether `value` holds a C0 or C1 control character or DEL.
    package static func containsControl(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

/// Password rules of identity-toolkit.md §1.5 (configurable minimum).
package struct PasswordPolicy: Sendable, Equatable {
    /// Fewest characters (Firebase: 6).
    package var minimumLength: Int
    /// Most characters.
    package var maximumLength: Int

    /// Firebase's default policy.
    package static let firebase = PasswordPolicy(minimumLength: 6, maximumLength: 4096)

    /// Creates a policy.
    package init(minimumLength: Int, maximumLength: Int) {
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
    }

    /// Whether the policy is enforced (`enforcementState` `ENFORCE` in `/v2/passwordPolicy`): it
    /// asks more than Firebase's default, whose only rule (6 characters) is `OFF` there
    /// (federation-and-limits.md §D.2).
    package var isEnforced: Bool { minimumLength > Self.firebase.minimumLength }

    /// Throws `WEAK_PASSWORD` (the default policy's short password) or
    /// `PASSWORD_DOES_NOT_MEET_REQUIREMENTS` (an enforced policy's, and any over the maximum).
    /// Lengths are UTF-16 code units, as the SDKs and production count them (an emoji is two).
    package func check(_ password: String) throws(AccountError) {
        let length = password.utf16.count
        if length < minimumLength {
            if isEnforced {
                throw AccountError(
                    .passwordTooShort, "Missing password requirements: [Password must contain at least \(minimumLength) characters]")
            }
            throw AccountError(.weakPassword, "Password should be at least \(minimumLength) characters")
        }
        if length > maximumLength {
            throw AccountError(
                .passwordTooLong,
                "Missing password requirements: [Password may contain at most \(maximumLength) characters]"
            )
        }
    }
}

/// base64url without padding.
package enum Base64URL {
    /// Encodes bytes, without padding. Byte by byte after Foundation's encoder: the import and every
    /// token pass through here, and `String.replacingOccurrences` cost a fifth of an import's CPU.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var encoded = Array(Data(bytes).base64EncodedData())
        while encoded.last == UInt8(ascii: "=") { encoded.removeLast() }
        for index in encoded.indices {
            switch encoded[index] {
            case UInt8(ascii: "+"): encoded[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): encoded[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Decodes base64url or standard base64, padded or not.
    package static func decode(_ text: String) -> [UInt8]? {
        var base64 = Array(text.utf8)
        for index in base64.indices {
            switch base64[index] {
            case UInt8(ascii: "-"): base64[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): base64[index] = UInt8(ascii: "/")
            default: break
            }
        }
        while base64.count % 4 != 0 { base64.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(base64)).map(Array.init)
    }
}
