import Synchronization

/// What the revocation listener drives besides the revocation cache: a cache told of changes by
/// `NOTIFY` (a key) and of the feed's loss and return.
package protocol InvalidationTarget: Sendable {
    /// Forgets `key`.
    func invalidate(_ key: String)
    /// Forgets everything and serves nothing from memory: the feed is lost.
    func suspend()
    /// Serves again, empty: the feed is back, and what changed meanwhile is unknown.
    func resume()
}

/// A replica's cache of rows that change rarely and are read on hot paths (provider configs,
/// custom-token signers; federation-and-limits.md §B.4, §C.2). Entries are filled from the store
/// on a miss, dropped when an invalidation names their key, and expire after `ttl` as the safety
/// net. While suspended (no feed yet, or the feed lost) every read goes to the store. A fill that
/// raced an invalidation is returned but not stored: it may hold the row from before the change.
package final class NotifiedCache<Value: Sendable>: InvalidationTarget {
    private struct Entry {
        var value: Value
        var storedAt: ContinuousClock.Instant
    }

    private struct Contents {
        var entries: [String: Entry] = [:]
        /// Counts invalidations; a fill remembers it when it starts.
        var epoch: UInt64 = 0
        var suspended: Bool
    }

    private let ttl: Duration
    private let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let contents: Mutex<Contents>

    /// A cache whose entries live `ttl`, at most `capacity` of them; `suspended` until its feed
    /// calls ``resume()``. `now` is injectable for tests of the expiry.
    package init(
        ttl: Duration, capacity: Int = 10_000, suspended: Bool,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.ttl = ttl
        self.capacity = capacity
        self.now = now
        self.contents = Mutex(Contents(suspended: suspended))
    }

    /// The value of `key`: from memory while fresh, else `fill`ed (and kept, unless an
    /// invalidation arrived meanwhile or the feed is down).
    package func value(_ key: String, fill: () async throws -> Value) async throws -> Value {
        let start = now()
        let cached: Entry? = contents.withLock { contents in
            guard !contents.suspended, let entry = contents.entries[key], start - entry.storedAt < ttl else { return nil }
            return entry
        }
        if let cached { return cached.value }
        let epoch = contents.withLock { $0.epoch }
        let value = try await fill()
        contents.withLock { contents in
            guard !contents.suspended, contents.epoch == epoch else { return }
            if contents.entries.count >= capacity { contents.entries = [:] }
            contents.entries[key] = Entry(value: value, storedAt: start)
        }
        return value
    }

    package func invalidate(_ key: String) {
        contents.withLock { contents in
            contents.epoch &+= 1
            contents.entries.removeValue(forKey: key)
        }
    }

    /// Forgets every entry (a change whose key is not known here).
    package func invalidateAll() {
        contents.withLock { $0 = Contents(epoch: $0.epoch &+ 1, suspended: $0.suspended) }
    }

    package func suspend() {
        contents.withLock { $0 = Contents(epoch: $0.epoch &+ 1, suspended: true) }
    }

    package func resume() {
        contents.withLock { $0 = Contents(epoch: $0.epoch &+ 1, suspended: false) }
    }
}
