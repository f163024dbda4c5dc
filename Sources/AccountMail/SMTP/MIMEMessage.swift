package import AccountCore
package import Foundation

/// Renders an ``EmailMessage`` as an RFC 5322 / MIME message: `multipart/alternative` with a
/// plain-text and an HTML part, both quoted-printable, so the whole message is 7-bit ASCII with
/// CRLF line ends and no line over 78 characters. Dot-stuffing is the SMTP layer's job.
package enum MIMEMessage {
    /// The rendered message (headers, blank line, body), without the SMTP terminator.
    package static func render(
        _ message: EmailMessage, from: MailAddress, date: Date, messageID: String, boundary: String
    ) throws -> String {
        try MailAddress.check(address: message.to)
        var lines = [
            "Date: \(rfc5322Date(date))",
            fold("From", from.headerWords),
            "To: \(message.to)",
            header("Subject", message.subject),
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"",
            "Auto-Submitted: auto-generated",
            "X-Accountd-Kind: \(message.kind.rawValue)",
            "",
        ]
        lines.append("This is a MIME message; your mail client should show its text or HTML part.")
        for (type, body) in [("text/plain", message.textBody), ("text/html", message.htmlBody)] {
            lines.append("--\(boundary)")
            lines.append("Content-Type: \(type); charset=utf-8")
            lines.append("Content-Transfer-Encoding: quoted-printable")
            lines.append("")
            lines.append(quotedPrintable(body))
        }
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `Name: value`, folded at spaces when long; a value that is not plain printable ASCII becomes
    /// RFC 2047 encoded-words (`=?UTF-8?B?…?=`). Line breaks in `value` never reach the header.
    package static func header(_ name: String, _ value: String) -> String {
        let flat = String(value.map { $0.isNewline ? " " : $0 })
        let plain = flat.unicodeScalars.allSatisfy { $0.value >= 32 && $0.value < 127 }
        // An ASCII value containing "=?" could be read as an encoded-word: encode it too.
        let words =
            plain && !flat.contains("=?")
            ? flat.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            : encodedWords(flat, firstLineBudget: 76 - name.count - 2)
        return fold(name, words)
    }

    /// `Name:` and `words` separated by spaces, with a line break before a word that would push
    /// the line past 78 characters (RFC 5322 §2.2.3 folding).
    package static func fold(_ name: String, _ words: [String]) -> String {
        var lines: [String] = []
        var line = "\(name):"
        for word in words {
            if line.count + 1 + word.count > 78 && line.count > name.count + 1 {
                lines.append(line)
                line = ""
            }
            line += " " + word
        }
        lines.append(line)
        return lines.joined(separator: "\r\n")
    }

    /// `value` as UTF-8 base64 encoded-words, split between characters, each at most 75 characters
    /// (the first at most `firstLineBudget`, to leave room for the header name on its line).
    package static func encodedWords(_ value: String, firstLineBudget: Int = 75) -> [String] {
        // 12 characters of "=?UTF-8?B?" and "?="; every 4 base64 characters carry 3 bytes.
        func capacity(_ characters: Int) -> Int { max(3, (min(characters, 75) - 12) / 4 * 3) }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in value {
            let bytes = Array(String(character).utf8)
            if !chunk.isEmpty && chunk.count + bytes.count > capacity(words.isEmpty ? firstLineBudget : 75) {
                words.append(encodedWord(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(encodedWord(chunk)) }
        return words
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?\(Data(bytes).base64EncodedString())?="
    }

    /// Quoted-printable (RFC 2045 §6.7) of `text` as UTF-8, with CRLF hard line breaks and soft
    /// breaks keeping every line within 76 characters.
    package static func quotedPrintable(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let normalized = text.replacing("\r\n", with: "\n").replacing("\r", with: "\n")
        var output: [String] = []
        for line in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var current: [UInt8] = []
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                var token: [UInt8]
                switch byte {
                case 33...60, 62...126:
                    token = [byte]
                case 32 where !last, 9 where !last:
                    token = [byte]
                default:
                    token = [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                }
                // Leave room for the soft break "=" (unless this token ends the line).
                let limit = last ? 76 : 75
                if current.count + token.count > limit {
                    current.append(UInt8(ascii: "="))
                    output.append(String(decoding: current, as: UTF8.self))
                    current = []
                }
                current += token
            }
            output.append(String(decoding: current, as: UTF8.self))
        }
        return output.joined(separator: "\r\n")
    }

    /// `Tue, 02 Jan 2024 15:04:05 +0000`.
    package static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }

    /// Doubles a leading "." on every line (RFC 5321 §4.5.2) and appends the end-of-data marker.
    package static func smtpData(_ rendered: String) -> String {
        var lines = rendered.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n") + "\r\n.\r\n"
    }
}
