import ArgumentParser

/// `accountd-bench`: the measurements `scripts/bench` takes next to the service, with the service's
/// own code but outside its binary: raw argon2id and RS256 rates, and the lookup statement
/// through the store and pool without HTTP.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accountd-bench",
        abstract: "Measurements for scripts/bench (prints JSON).",
        subcommands: [BenchPrimitives.self, BenchSQL.self, BenchIdPFixture.self, BenchStatements.self]
    )
}
