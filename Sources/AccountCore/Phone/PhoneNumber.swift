/// Phone numbers as every field that carries one reads them (mfa-phone-tenants.md §A.1): E.164,
/// written with or without the usual separators, stored and compared in one canonical form.
package enum PhoneNumber {
    /// The canonical form `+<digits>` of `raw`, or the refusal A.1 gives: `Invalid format.` for a
    /// missing or malformed number, `TOO_SHORT` under 7 digits, `TOO_LONG` over 15.
    package static func normalise(_ raw: String?) throws(AccountError) -> String {
        guard let raw, !raw.isEmpty else { throw AccountError(.invalidPhoneNumber, "Invalid format.") }
        var digits = ""
        var sawPlus = false
        for scalar in raw.unicodeScalars {
            switch scalar {
            case " ", "\u{00A0}", "-", ".", "(", ")":
                continue
            case "+" where !sawPlus && digits.isEmpty:
                sawPlus = true
            case "0"..."9" where sawPlus:
                // The first digit of a country calling code is never 0 (no `00` prefix).
                if digits.isEmpty && scalar == "0" { throw AccountError(.invalidPhoneNumber, "Invalid format.") }
                digits.unicodeScalars.append(scalar)
            default:
                throw AccountError(.invalidPhoneNumber, "Invalid format.")
            }
            // Far past any E.164 length: stop reading a flood of digits.
            if digits.count > 64 { break }
        }
        guard sawPlus, !digits.isEmpty else { throw AccountError(.invalidPhoneNumber, "Invalid format.") }
        if digits.count < 7 { throw AccountError(.invalidPhoneNumber, "TOO_SHORT") }
        if digits.count > 15 { throw AccountError(.invalidPhoneNumber, "TOO_LONG") }
        return "+" + digits
    }

    /// Whether `raw` is already a canonical number.
    package static func isCanonical(_ raw: String) -> Bool {
        (try? normalise(raw)) == raw
    }

    /// The number as a challenge shows it (§B.3): `+`, a `*` per digit but the last four, then those.
    package static func obfuscated(_ canonical: String) -> String {
        let digits = canonical.dropFirst()
        return "+" + String(repeating: "*", count: max(0, digits.count - 4)) + digits.suffix(4)
    }

    /// The number without its last three digits: the range SMS pumping walks (§A.8 `sms_per_range`).
    package static func range(of canonical: String) -> String {
        String(canonical.dropLast(3))
    }
}
