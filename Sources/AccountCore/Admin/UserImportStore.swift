package import Foundation

/// Stores imported users: each in its own savepoint of one transaction, so one bad user fails
/// alone. Returns per-index error messages.
package protocol UserImportStore: Sendable {
    func importUsers(_ users: [(index: Int, user: UserRecord)], allowOverwrite: Bool, now: Date) async throws -> [Int: String]
}
