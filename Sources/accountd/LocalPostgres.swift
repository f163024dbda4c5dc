import AccountPostgres
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL 15 cluster in a local, git-ignored folder, for `accountd serve` without a
/// `DATABASE_URL`: installs the server with apt when missing, runs initdb and pg_ctl (as the
/// `postgres` user when we are root), listens on a Unix socket in its data directory only (no TCP),
/// and stops on shutdown.
struct LocalPostgres {
    /// The folder that holds the cluster (`<data>/pgdata`) and its log.
    let directory: URL
    /// The cluster's port number: it names the socket file (`.s.PGSQL.<port>`); nothing listens on TCP.
    let port: Int
    let logger: Logger

    /// A cluster in `dataDirectory`. When we are root and the `postgres` user cannot reach that
    /// folder (a clone under `/root`, say), the cluster goes to `/var/lib/accountd/<hash>` instead.
    init(dataDirectory: String, port: Int, logger: Logger) {
        let requested = URL(fileURLWithPath: dataDirectory).standardizedFileURL
        self.port = port
        self.logger = logger
        if getuid() == 0, !Self.postgresCanReach(requested.deletingLastPathComponent(), logger: logger) {
            let digest = requested.path.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
            self.directory = URL(fileURLWithPath: "/var/lib/accountd/\(String(digest, radix: 16))")
            logger.notice(
                "the postgres user cannot reach the data folder; using another",
                metadata: ["requested": "\(requested.path)", "using": "\(self.directory.path)"]
            )
        } else {
            self.directory = requested
        }
    }

    private static func postgresCanReach(_ folder: URL, logger: Logger) -> Bool {
        let probe = LocalPostgres(directory: folder, port: 0, logger: logger)
        return (try? probe.run("/usr/sbin/runuser", ["-u", "postgres", "--", "/usr/bin/test", "-x", folder.path], quiet: true)) != nil
    }

    private static let binDirectory = "/usr/lib/postgresql/15/bin"
    private static let databaseName = "accountd"

    private var pgdata: URL { directory.appendingPathComponent("pgdata") }
    private var isRoot: Bool { getuid() == 0 }

    /// The URL of the cluster's `accountd` database: its Unix socket in the data directory.
    var databaseURL: DatabaseURL {
        DatabaseURL(socketDirectory: pgdata.path, port: port, username: "postgres", database: Self.databaseName)
    }

    /// Installs, initialises and starts the cluster, and creates the database; idempotent.
    func start() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if isRoot { try run("/bin/chown", ["postgres:postgres", directory.path]) }
        if !FileManager.default.fileExists(atPath: pgdata.appendingPathComponent("PG_VERSION").path) {
            logger.info("initialising local PostgreSQL cluster", metadata: ["path": "\(pgdata.path)"])
            try runPostgres(
                "initdb",
                ["-D", pgdata.path, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]
            )
        }
        if (try? runPostgres("pg_ctl", ["-D", pgdata.path, "status"], quiet: true)) != nil {
            logger.notice(
                "the local PostgreSQL in \(pgdata.path) is already running (another accountd on this data directory?): sharing it")
        } else {
            logger.info("starting local PostgreSQL", metadata: ["socket": "\(pgdata.path)"])
            // No TCP at all: the trust-authenticated superuser is reachable only through the socket
            // in the data directory (mode 0700, owned by postgres), so no other local user reaches
            // it, and checkouts with their own data directories never compete for a port.
            try runPostgres(
                "pg_ctl",
                [
                    "-D", pgdata.path, "-l", directory.appendingPathComponent("postgres.log").path, "-w", "-t", "60",
                    "-o", "-p \(port) -c listen_addresses='' -k \(pgdata.path) -c unix_socket_permissions=0700", "start",
                ]
            )
        }
        let exists = try runPostgres(
            "psql",
            [
                "-h", pgdata.path, "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-tAc",
                "SELECT 1 FROM pg_database WHERE datname = '\(Self.databaseName)'",
            ],
            binary: "/usr/bin/psql"
        )
        if exists.trimmingCharacters(in: .whitespacesAndNewlines) != "1" {
            try runPostgres(
                "psql",
                [
                    "-h", pgdata.path, "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-c",
                    "CREATE DATABASE \(Self.databaseName)",
                ],
                binary: "/usr/bin/psql"
            )
        }
    }

    /// Stops the cluster (fast shutdown: open transactions roll back).
    func stop() {
        logger.info("stopping local PostgreSQL")
        do {
            try runPostgres("pg_ctl", ["-D", pgdata.path, "-m", "fast", "-w", "stop"])
        } catch {
            logger.error("could not stop local PostgreSQL", metadata: ["error": "\(error)"])
        }
    }

    /// Installs PostgreSQL 15 with apt when it is missing (root only); call before `init`, which
    /// needs the `postgres` user to exist.
    static func installIfMissing(logger: Logger) throws {
        guard !FileManager.default.fileExists(atPath: "\(Self.binDirectory)/pg_ctl") else { return }
        guard getuid() == 0 else {
            throw LocalPostgresError("PostgreSQL 15 is not installed: run `sudo apt-get install postgresql-15`, or set DATABASE_URL")
        }
        logger.notice("PostgreSQL 15 not found: installing it with apt-get")
        let installer = LocalPostgres(directory: URL(fileURLWithPath: "/"), port: 0, logger: logger)
        try installer.run("/usr/bin/apt-get", ["update", "-qq"])
        try installer.run(
            "/usr/bin/apt-get",
            ["install", "-y", "-qq", "postgresql-15", "postgresql-client-15"],
            environment: ["DEBIAN_FRONTEND": "noninteractive"]
        )
    }

    private init(directory: URL, port: Int, logger: Logger) {
        self.directory = directory
        self.port = port
        self.logger = logger
    }

    @discardableResult
    private func runPostgres(_ tool: String, _ arguments: [String], binary: String? = nil, quiet: Bool = false) throws -> String {
        let path = binary ?? "\(Self.binDirectory)/\(tool)"
        if isRoot {
            return try run("/usr/sbin/runuser", ["-u", "postgres", "--", "/usr/bin/setsid", path] + arguments, quiet: quiet)
        }
        return try run("/usr/bin/setsid", [path] + arguments, quiet: quiet)
    }

    /// Runs a command to completion with posix_spawn and waitpid, its output captured in a
    /// temporary file. (Foundation's `Process` can miss the exit of a command whose children
    /// daemonise, as `pg_ctl start` does, and hang.)
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:], quiet: Bool = false) throws -> String
    {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("accountd-\(UUID().uuidString).log").path
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let mergedEnvironment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = mergedEnvironment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw LocalPostgresError("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exitedCleanly = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        guard exitedCleanly else {
            if !quiet {
                logger.error(
                    "command failed",
                    metadata: [
                        "command": "\(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.prefix(4).joined(separator: " "))",
                        "output": "\(text.suffix(2000))",
                    ]
                )
            }
            throw LocalPostgresError("`\(([executable] + arguments).joined(separator: " "))` failed: \(text.suffix(500))")
        }
        return text
    }
}

/// Why the local cluster could not be brought up.
struct LocalPostgresError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
