import Foundation
import Glibc
import Synchronization

/// A child process the tests start: `posix_spawn` with none of this process's descriptors but the
/// three it is given, and a thread of its own that waits for its end. Not Foundation's `Process`:
/// that learns of a child's end from a socket the child holds, so any other child that inherited
/// the socket (tests run in parallel and spawn concurrently; PostgreSQL daemons live on) kept a
/// finished `accountctl` "running" and its test waiting for ever.
package final class ChildProcess: Sendable {
    package let processIdentifier: Int32
    private let status = Mutex<Int32?>(nil)

    /// Starts `program` with `arguments` and `environment`; stdin from `input` (a file) or
    /// /dev/null, stdout and stderr to the given files or /dev/null.
    package init(
        _ program: String, _ arguments: [String], environment: [String: String], input: String? = nil, output: String? = nil,
        errors: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Nothing else of this process's (glibc 2.34's posix_spawn_file_actions_addclosefrom_np,
        // which Swift's Glibc does not import). PostgreSQL, for one, counts inherited descriptors
        // against max_files_per_process and refused to start with the suite's sockets open.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestDatabaseError("\(program): posix_spawn failed (\(spawned))") }
        processIdentifier = pid
        let child = pid
        // The waiting thread holds the object until the child has ended.
        Thread.detachNewThread { [self] in
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) == -1 && errno == EINTR {}
            status.withLock { $0 = raw }
        }
    }

    /// Whether it has not ended yet.
    package var isRunning: Bool { status.withLock { $0 == nil } }

    /// Its exit code (128 + the signal when killed); nil while it runs.
    package var exitCode: Int32? {
        status.withLock { raw in
            raw.map { ($0 & 0x7f) == 0 ? ($0 >> 8) & 0xff : 128 + ($0 & 0x7f) }
        }
    }

    /// Asks it to stop (SIGTERM, as an orchestrator does).
    package func terminate() { kill(processIdentifier, SIGTERM) }

    /// Its exit code once it has ended, polled without blocking a thread of the cooperative pool.
    package func exit() async throws -> Int32 {
        while true {
            if let code = exitCode { return code }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
