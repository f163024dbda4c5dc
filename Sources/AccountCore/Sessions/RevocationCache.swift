import Foundation
import Synchronization

/// What `verifyIdToken` and the token endpoint need to know about a session to decide revocation.
package struct SessionState: Sendable, Equatable {
    package var localID: String
    /// The session row exists and is not revoked or expired.
    package var sessionLive: Bool
    /// The user exists (not deleted).
    package var userExists: Bool
    package var userDisabled: Bool
    /// V of the user.
    package var validSince: Int64

    /// Creates a state.
    package init(localID: String, sessionLive: Bool, userExists: Bool, userDisabled: Bool, validSince: Int64) {
        self.localID = localID
        self.sessionLive = sessionLive
        self.userExists = userExists
        self.userDisabled = userDisabled
        self.validSince = validSince
    }
}

/// Each replica's cache of session and user revocation state. Entries are filled from the database
/// on a miss, dropped when a `LISTEN/NOTIFY` invalidation arrives, and expire after a short TTL as
/// the safety net; a lost notification connection clears everything.
package final class RevocationCache: Sendable {
    private struct Entry {
        var state: SessionState
        var storedAt: ContinuousClock.Instant
    }

    private struct Contents {
        var bySession: [String: Entry] = [:]
        var sessionsByUser: [String: Set<String>] = [:]
        /// Counts invalidations; a fill remembers it when it starts.
        var epoch: UInt64 = 0
        /// The epoch of the last ``RevocationCache/clear()``.
        var clearedAt: UInt64 = 0
        /// While set, nothing is stored or served (``RevocationCache/suspend()``).
        var suspended = false
        /// For each slot of user and session ids (``RevocationCache/slot(_:)``), the epoch of the
        /// last invalidation that named an id of that slot.
        var stamps = [UInt64](repeating: 0, count: RevocationCache.slots)

        mutating func stamp(_ id: String) {
            epoch &+= 1
            stamps[RevocationCache.slot(id)] = epoch
        }
    }

    /// Taken before a fill reads the database; its ``store(_:forSession:since:)`` stores only if
    /// no invalidation of that session or its user arrived in between.
    package struct Fill: Sendable {
        fileprivate let epoch: UInt64
    }

    /// How many slots invalidations are stamped in: ids that share a slot only cost each other a
    /// fill now and then, never a stale answer.
    static let slots = 1024

    /// The slot of a user or session id: FNV-1a of its bytes, the same in every process.
    package static func slot(_ id: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(slots))
    }

    private let contents: Mutex<Contents>
    private let ttl: Duration
    private let capacity: Int

    /// Creates a cache whose entries live at most `ttl`, holding at most `capacity` sessions;
    /// `suspended` until its invalidation feed calls ``resume()``.
    package init(ttl: Duration = .seconds(5), capacity: Int = 100_000, suspended: Bool = false) {
        self.ttl = ttl
        self.capacity = capacity
        self.contents = Mutex(Contents(suspended: suspended))
    }

    /// The cached state, if fresh.
    package func state(forSession sessionID: String) -> SessionState? {
        let now = ContinuousClock.now
        return contents.withLock { contents in
            guard let entry = contents.bySession[sessionID] else { return nil }
            return now - entry.storedAt < ttl ? entry.state : nil
        }
    }

    /// Starts a fill: call before reading the state from the database.
    package func beginFill() -> Fill {
        contents.withLock { Fill(epoch: $0.epoch) }
    }

    /// Remembers a state read from the database after `fill` began, unless an invalidation of this
    /// session or its user (or a clear) arrived since: the read may have raced the revocation it
    /// announced, and storing it would serve a revoked session as live for the whole TTL instead of
    /// the promised second.
    package func store(_ state: SessionState, forSession sessionID: String, since fill: Fill) {
        let now = ContinuousClock.now
        contents.withLock { contents in
            guard !contents.suspended, contents.clearedAt <= fill.epoch, contents.stamps[Self.slot(sessionID)] <= fill.epoch,
                contents.stamps[Self.slot(state.localID)] <= fill.epoch
            else { return }
            if contents.bySession.count >= capacity {
                contents.bySession = [:]
                contents.sessionsByUser = [:]
            }
            contents.bySession[sessionID] = Entry(state: state, storedAt: now)
            contents.sessionsByUser[state.localID, default: []].insert(sessionID)
        }
    }

    /// Forgets every session of a user (revoke-all, disable, delete, validSince).
    package func invalidate(user localID: String) {
        contents.withLock { contents in
            contents.stamp(localID)
            for sessionID in contents.sessionsByUser.removeValue(forKey: localID) ?? [] {
                contents.bySession.removeValue(forKey: sessionID)
            }
        }
    }

    /// Forgets one session.
    package func invalidate(session sessionID: String) {
        contents.withLock { contents in
            contents.stamp(sessionID)
            if let entry = contents.bySession.removeValue(forKey: sessionID) {
                contents.sessionsByUser[entry.state.localID]?.remove(sessionID)
            }
        }
    }

    /// Forgets everything.
    package func clear() {
        contents.withLock { contents in
            let epoch = contents.epoch &+ 1
            contents = Contents(epoch: epoch, clearedAt: epoch, suspended: contents.suspended)
        }
    }

    /// Forgets everything and stores nothing until ``resume()``: the invalidation feed is lost, so
    /// no entry could be trusted.
    package func suspend() {
        contents.withLock { contents in
            let epoch = contents.epoch &+ 1
            contents = Contents(epoch: epoch, clearedAt: epoch, suspended: true)
        }
    }

    /// Starts caching again, empty: the invalidation feed is back.
    package func resume() {
        contents.withLock { contents in
            let epoch = contents.epoch &+ 1
            contents = Contents(epoch: epoch, clearedAt: epoch, suspended: false)
        }
    }
}
