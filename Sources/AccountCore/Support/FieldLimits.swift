/// The lengths of client-supplied strings that are stored or echoed (federation-and-limits.md
/// decision 17): a value past its bound is refused with `INVALID_ARGUMENT` before anything is
/// written, so no client can fill the database or bounce megabytes off the server. Lengths are
/// UTF-8 bytes, what the database stores.
package enum FieldLimits {
    /// `createAuthUri`'s `sessionId` (echoed, and stored with a redirect flow).
    package static let sessionID = 256
    /// A redirect flow's `context`, returned by the callback.
    package static let context = 2048
    /// A continue URL (identity-toolkit.md §1.5: an absolute URL is at most 2048).
    package static let continueURI = 2048
    /// A redirect flow's extra `oauthScope`.
    package static let oauthScope = 1024
    /// A redirect flow's `customParameter`: this many entries, each name and value this long.
    package static let customParameterCount = 16
    package static let customParameter = 256
    /// `hostedDomain` (a DNS name) and ActionCodeSettings' app fields (`iOSBundleId`,
    /// `iOSAppStoreId`, `androidPackageName`, `androidMinimumVersion`).
    package static let appField = 255

    /// Refuses `value` when it is longer than `limit` bytes, naming the field as the wire spells it.
    package static func check(_ value: String?, _ field: String, _ limit: Int) throws(AccountError) {
        guard let value, value.utf8.count > limit else { return }
        throw tooLong(field, limit)
    }

    /// `INVALID_ARGUMENT : <field> is longer than <limit> bytes.`
    package static func tooLong(_ field: String, _ limit: Int) -> AccountError {
        AccountError(.invalidArgument, "\(field) is longer than \(limit) bytes.")
    }
}
