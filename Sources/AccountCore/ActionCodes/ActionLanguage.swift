import Foundation

/// The language of an email action (`X-Firebase-Locale`, the action page's `lang`): stored with the
/// code, written into its link and its mails, so it is a language tag or nothing.
package enum ActionLanguage {
    /// `raw` when it is a BCP 47-like tag of at most 35 bytes (`en`, `fr-CA`, `zh_Hant_TW`), else
    /// nil: a value counted in characters could hide kilobytes in one letter's combining marks.
    package static func tag(_ raw: String?) -> String? {
        guard let raw, (1...35).contains(raw.utf8.count) else { return nil }
        let parts = raw.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard let first = parts.first, (1...8).contains(first.utf8.count), first.utf8.allSatisfy(isLetter) else { return nil }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.utf8.count) && $0.utf8.allSatisfy { isLetter($0) || isDigit($0) } }
            ? raw : nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
