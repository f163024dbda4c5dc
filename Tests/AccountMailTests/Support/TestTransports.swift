import AccountCore
import AccountMail
import Synchronization

/// Records what it is asked to send; fails the first `failures` sends ("relay down"), and can
/// take `delay` per send (to widen race windows).
final class TestTransport: MailTransport {
    private let state = Mutex<(attempts: Int, delivered: [EmailMessage])>((0, []))
    private let failures: Int
    private let delay: Duration

    init(failures: Int = 0, delay: Duration = .zero) {
        self.failures = failures
        self.delay = delay
    }

    struct RelayDown: Error, CustomStringConvertible {
        var description: String { "relay down (test)" }
    }

    func send(_ message: EmailMessage) async throws {
        if delay > .zero { try await Task.sleep(for: delay) }
        let attempt = state.withLock { state in
            state.attempts += 1
            return state.attempts
        }
        if attempt <= failures { throw RelayDown() }
        state.withLock { $0.delivered.append(message) }
    }

    /// Every call to `send`.
    var attempts: Int { state.withLock { $0.attempts } }
    /// The messages it accepted, in order.
    var delivered: [EmailMessage] { state.withLock { $0.delivered } }
}

/// Refuses the listed recipients with the given SMTP errors; accepts everyone else.
final class RefusingTransport: MailTransport {
    let refusals: [String: SMTPError]

    init(refusals: [String: SMTPError]) {
        self.refusals = refusals
    }

    func send(_ message: EmailMessage) async throws {
        if let refusal = refusals[message.to] { throw refusal }
    }
}
