package import AccountCore
package import Foundation

/// ``SigningKeyStore`` in memory, for unit tests and the store contract: the same rules as the
/// PostgreSQL store, at most one `current` key above all.
package actor MemorySigningKeyStore: SigningKeyStore {
    private var records: [SigningKeyRecord] = []

    /// Creates an empty store.
    package init() {}

    /// Every record ever inserted, removed ones included, oldest first (for tests).
    package var allRecords: [SigningKeyRecord] { records }

    package func publishedKeys(at now: Date) -> [SigningKeyRecord] {
        records.filter { record in record.removeAfter.map { $0 > now } ?? true }
    }

    package func insert(_ key: SigningKeyRecord) throws {
        if records.contains(where: { $0.kid == key.kid }) { throw SigningKeyConflict() }
        if key.state == .current, records.contains(where: { $0.state == .current }) { throw SigningKeyConflict() }
        records.append(key)
    }

    /// Promoting the key that is already current does nothing; promoting a key that is neither
    /// `next` nor current (retired, unknown) throws ``SigningKeyConflict``: another replica moved on.
    package func promote(kid: String, at now: Date, retiredRemoveAfter: Date) throws {
        guard let index = records.firstIndex(where: { $0.kid == kid }) else { throw SigningKeyConflict() }
        switch records[index].state {
        case .current: return
        case .retired: throw SigningKeyConflict()
        case .next: break
        }
        for other in records.indices where records[other].state == .current {
            records[other].state = .retired
            records[other].retiredAt = now
            records[other].removeAfter = retiredRemoveAfter
        }
        records[index].state = .current
        records[index].activatedAt = now
    }
}
