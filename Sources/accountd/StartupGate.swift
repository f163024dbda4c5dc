import ServiceLifecycle

/// Opens once the schema is known to be current, so background services that read tables do not
/// race the migration at start-up.
actor StartupGate {
    private var open = false
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0

    /// Lets every waiter (and later caller) through.
    func openGate() {
        open = true
        for waiter in waiters.values { waiter.resume() }
        waiters.removeAll()
    }

    /// Returns `true` once the gate is open, `false` if the task was cancelled first (a start-up that
    /// failed must not leave services waiting forever).
    func wait() async -> Bool {
        if open { return true }
        let id = nextID
        nextID += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if open || Task.isCancelled {
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
        return open
    }

    private func cancel(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume()
    }
}

/// Runs `inner` once the gate opens; ends quietly if shut down before.
struct GatedService: Service {
    let gate: StartupGate
    let inner: any Service

    func run() async throws {
        let opened = await cancelWhenGracefulShutdown { await gate.wait() }
        guard opened, !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await inner.run()
    }
}
