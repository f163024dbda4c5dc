/// A mailbox as configured or addressed: `user@example.com` or `Display Name <user@example.com>`.
/// Refuses anything that could smuggle a header or an SMTP command (line breaks, angle brackets in
/// the address, spaces).
package struct MailAddress: Sendable, Equatable {
    /// The bare address, as used in `MAIL FROM` / `RCPT TO`.
    package var address: String
    /// The display name, if any.
    package var displayName: String?

    /// Why an address was refused.
    package struct Invalid: Error, CustomStringConvertible {
        /// What is wrong.
        package var description: String
    }

    /// Parses `address` or `Name <address>`.
    package init(parsing value: String) throws {
        let trimmed = value.trimmingWhitespace()
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            let name = String(trimmed[..<open]).trimmingWhitespace()
            let unquoted = name.count >= 2 && name.hasPrefix("\"") && name.hasSuffix("\"") ? String(name.dropFirst().dropLast()) : name
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            displayName = unquoted.isEmpty ? nil : unquoted
        } else {
            address = trimmed
            displayName = nil
        }
        try Self.check(address: address)
        if let displayName, displayName.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw Invalid(description: "the sender's display name contains a line break")
        }
    }

    /// Checks a bare address: one `@` with text on both sides, no spaces, controls or brackets.
    package static func check(address: String) throws {
        guard let at = address.lastIndex(of: "@"), at != address.startIndex, address.index(after: at) != address.endIndex else {
            throw Invalid(description: "\"\(address.prefix(80))\" is not an email address")
        }
        let forbidden: Set<Character> = ["<", ">", "\"", "(", ")", ",", ";", "\\"]
        guard
            !address.contains(where: { $0.isWhitespace || $0.isNewline || forbidden.contains($0) || $0.asciiValue.map { $0 < 32 } == true })
        else {
            throw Invalid(description: "\"\(address.prefix(80).filter { !$0.isNewline })\" is not a plain email address")
        }
    }

    /// The domain part, for `Message-ID`.
    package var domain: String {
        address.lastIndex(of: "@").map { String(address[address.index(after: $0)...]) } ?? "localhost"
    }

    /// The `From:`/`To:` header form, with a quoted or RFC 2047-encoded display name.
    package var headerValue: String {
        headerWords.joined(separator: " ")
    }

    /// ``headerValue`` as words that may be folded between (after a `From:` header name).
    package var headerWords: [String] {
        guard let displayName else { return [address] }
        if displayName.allSatisfy({ $0.isASCII }) {
            let escaped = displayName.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
            let atoms = displayName.allSatisfy { $0.isLetter || $0.isNumber || $0 == " " || "!#$%&'*+-/=?^_`{|}~".contains($0) }
            // Unquoted, "=?…?=" would read as an encoded-word.
            return [atoms && !displayName.contains("=?") ? displayName : "\"\(escaped)\"", "<\(address)>"]
        }
        return MIMEMessage.encodedWords(displayName, firstLineBudget: 76 - "From: ".count) + ["<\(address)>"]
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        self.replacing(target, with: replacement)
    }
}
