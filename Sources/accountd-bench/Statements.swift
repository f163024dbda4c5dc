import AccountPostgres
import ArgumentParser
import Foundation

/// `accountd-bench statements`: the store's prepared statements, one JSON object a line (`name`,
/// `sql`), for `scripts/shard-plans`, which reads their plans against a schema distributed by user.
struct BenchStatements: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statements",
        abstract: "Print the store's prepared statements as JSON lines.",
    )

    func run() throws {
        for (name, sql) in Prepared.catalogue {
            let line = try JSONSerialization.data(withJSONObject: ["name": name, "sql": sql], options: [.sortedKeys])
            print(String(decoding: line, as: UTF8.self))
        }
    }
}
