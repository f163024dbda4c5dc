public import Foundation
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
        /// Moves on every invalidation: a fill that read the database before the latest one may
        /// hold what that invalidation revoked.
        var epoch: UInt64 = 0
    }

    /// Taken before a fill reads the database; its ``store(_:forSession:since:)`` stores only if
    /// no invalidation arrived in between.
    package struct Fill: Sendable {
        fileprivate let epoch: UInt64
    }

    private let contents = Mutex(Contents())
    private let ttl: Duration
    private let capacity: Int

    /// Creates a cache whose entries live at most `ttl`, holding at most `capacity` sessions.
    package init(ttl: Duration = .seconds(5), capacity: Int = 100_000) {
        self.ttl = ttl
        self.capacity = capacity
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

    /// Remembers a state read from the database after `fill` began, unless an invalidation arrived
    /// since: the read may have raced the revocation that invalidation announced, and storing it
    /// would serve a revoked session as live for the whole TTL instead of the promised second.
    package func store(_ state: SessionState, forSession sessionID: String, since fill: Fill) {
        let now = ContinuousClock.now
        contents.withLock { contents in
            guard contents.epoch == fill.epoch else { return }
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
            contents.epoch &+= 1
            for sessionID in contents.sessionsByUser.removeValue(forKey: localID) ?? [] {
                contents.bySession.removeValue(forKey: sessionID)
            }
        }
    }

    /// Forgets one session.
    package func invalidate(session sessionID: String) {
        contents.withLock { contents in
            contents.epoch &+= 1
            if let entry = contents.bySession.removeValue(forKey: sessionID) {
                contents.sessionsByUser[entry.state.localID]?.remove(sessionID)
            }
        }
    }

    /// Forgets everything (the notification connection was lost).
    package func clear() {
        contents.withLock { contents in
            contents = Contents(epoch: contents.epoch &+ 1)
        }
    }
}
