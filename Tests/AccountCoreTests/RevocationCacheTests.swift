import AccountCore
import Testing

/// Issue 19 point 8: a fill that read the database before a revocation's notification arrived
/// must not store what it read (it may be the state from before the revocation).
@Suite("Revocation cache fills")
struct RevocationCacheTests {
    static let live = SessionState(localID: "u1", sessionLive: true, userExists: true, userDisabled: false, validSince: 0)

    @Test("a fill that began before an invalidation of its user, its session or everything stores nothing")
    func fillRacingAnInvalidation() {
        let invalidations: [(RevocationCache) -> Void] = [
            { $0.invalidate(user: "u1") }, { $0.invalidate(session: "s1") }, { $0.clear() },
        ]
        for invalidate in invalidations {
            let cache = RevocationCache()
            let fill = cache.beginFill()
            invalidate(cache)  // the NOTIFY arrives while the read is in flight
            cache.store(Self.live, forSession: "s1", since: fill)
            #expect(cache.state(forSession: "s1") == nil)
        }
    }

    @Test("another user's or session's invalidation in between does not cost the fill its store")
    func unrelatedInvalidation() throws {
        let others = ["u2", "s2"]
        for other in others {
            try #require(RevocationCache.slot(other) != RevocationCache.slot("u1"))
            try #require(RevocationCache.slot(other) != RevocationCache.slot("s1"))
        }
        let cache = RevocationCache()
        let fill = cache.beginFill()
        cache.invalidate(user: "u2")
        cache.invalidate(session: "s2")
        cache.store(Self.live, forSession: "s1", since: fill)
        #expect(cache.state(forSession: "s1") == Self.live)
    }

    @Test("a fill with no invalidation in between is stored and served; a later invalidation drops it")
    func quietFill() {
        let cache = RevocationCache()
        let fill = cache.beginFill()
        cache.store(Self.live, forSession: "s1", since: fill)
        #expect(cache.state(forSession: "s1") == Self.live)
        cache.invalidate(user: "u1")
        #expect(cache.state(forSession: "s1") == nil)
        // A fill that began after the invalidation is fine again.
        let next = cache.beginFill()
        cache.store(Self.live, forSession: "s1", since: next)
        #expect(cache.state(forSession: "s1") == Self.live)
    }
}
