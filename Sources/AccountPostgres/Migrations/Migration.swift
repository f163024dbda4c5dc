import AccountCore
import Crypto
package import Foundation

/// One numbered schema file, `NNNN_verb_noun.sql`, as read from `migrations/`.
package struct Migration: Sendable, Equatable {
    /// The number before the first underscore.
    package var version: Int
    /// The file name.
    package var name: String
    /// The SQL text.
    package var sql: String
    /// SHA-256 of the file's bytes, hex; an applied file whose checksum changes was edited.
    package var checksum: String

    /// Creates a migration from its file name and contents.
    package init(name: String, sql: String) throws {
        let prefix = name.prefix { $0.isNumber }
        guard !prefix.isEmpty, let version = Int(prefix), name.dropFirst(prefix.count).hasPrefix("_"),
            name.hasSuffix(".sql")
        else {
            throw MigrationError.badFileName(name)
        }
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = Hex.encode(SHA256.hash(data: Data(sql.utf8)))
    }

    /// Reads every `NNNN_*.sql` file of a folder, ordered by number; two files with one number are
    /// refused.
    package static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError.folderMissing(directory.path)
        }
        let migrations = try names.filter { $0.hasSuffix(".sql") }.map { name in
            let url = directory.appendingPathComponent(name)
            return try Migration(name: name, sql: String(contentsOf: url, encoding: .utf8))
        }.sorted { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) where a.version == b.version {
            throw MigrationError.duplicateVersion(a.name, b.name)
        }
        return migrations
    }
}

/// What the migrator refuses, each with the operator's next step.
package enum MigrationError: Error, Equatable, CustomStringConvertible {
    case badFileName(String)
    case folderMissing(String)
    case duplicateVersion(String, String)
    case pending([String])
    case edited(String)
    case unknownApplied(String)
    case failed(String, String)

    package var description: String {
        switch self {
        case .badFileName(let name):
            return "migration file \(name) does not follow NNNN_verb_noun.sql"
        case .folderMissing(let path):
            return "migrations folder \(path) not found: run from the repository root or set ACCOUNTD_MIGRATIONS_DIR"
        case .duplicateVersion(let a, let b):
            return "migrations \(a) and \(b) share a number: renumber one of them"
        case .pending(let names):
            return "database schema is behind: pending migration(s) \(names.joined(separator: ", ")). "
                + "Run `accountd migrate`, or start with `accountd serve --migrate`"
        case .edited(let name):
            return "applied migration \(name) was edited after it ran (checksum differs). "
                + "Restore the file and put the change in a new numbered migration"
        case .unknownApplied(let name):
            return "the database has migration \(name) applied that this build does not know: "
                + "run a build that includes it"
        case .failed(let name, let reason):
            return "migration \(name) failed and was rolled back: \(reason)"
        }
    }
}
