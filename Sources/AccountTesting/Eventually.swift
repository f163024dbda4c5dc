/// Polls `condition` every `interval` until it holds or `timeout` has passed (then one last time);
/// whether it held. The timeout is a backstop against a hang, never a measurement: a test waits
/// for a state, and a loaded machine only makes it wait longer.
package func eventually(
    timeout: Duration = .seconds(60), interval: Duration = .milliseconds(25), _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}
