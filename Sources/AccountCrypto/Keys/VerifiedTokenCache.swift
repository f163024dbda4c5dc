import AccountCore
import Crypto
import Synchronization

/// ID tokens whose signature this replica has already checked, so that a token presented again
/// (a backend verifies the same user's token on every call for up to an hour) costs a SHA-256 and a
/// dictionary lookup instead of an RSA verification and two base64url and JSON decodings.
///
/// What is remembered is only "these exact bytes carry a valid signature by key `kid`, and decode
/// to this payload". Entries are keyed by the SHA-256 of the whole token, so a hit means the same
/// bytes. Every caller still checks the claims, the expiry and the revocation state on every call;
/// the ring still checks on every hit that `kid` is a live published key. Entries leave at the
/// token's `exp`; when the cache is full, expired entries go first, then arbitrary ones until an
/// eighth of it is free.
package final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let kid: String
        let payload: [String: JSONValue]
        /// The token's `exp`, in seconds since 1970.
        let expires: Int64
    }

    private let entries = Mutex<[SHA256Digest: Entry]>([:])
    /// The most tokens held; 0 turns the cache off (``key(_:)`` gives no key).
    private let capacity: Int

    /// A cache of at most `capacity` tokens (0: nothing is cached).
    package init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The key `token` is held under; nil when the cache is off, which then skips the hashing too.
    func key(_ token: [UInt8]) -> SHA256Digest? {
        capacity > 0 ? SHA256.hash(data: token) : nil
    }

    /// The entry for `key` if there is one that has not expired at `now` (seconds since 1970).
    func entry(_ key: SHA256Digest, now: Int64) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.expires > now else {
                entries.removeValue(forKey: key)
                return nil
            }
            return entry
        }
    }

    /// Remembers a verified token whose `exp` lies after `now`; tokens without one are not held.
    func store(_ key: SHA256Digest, kid: String, payload: [String: JSONValue], now: Int64) {
        guard let expires = payload["exp"]?.intValue, expires > now else { return }
        let entry = Entry(kid: kid, payload: payload, expires: expires)
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity {
                // Make room for an eighth at once, so that a full cache is swept once per eighth of
                // its capacity, not on every insert.
                entries = entries.filter { $0.value.expires > now }
                let excess = entries.count - (capacity - max(1, capacity / 8))
                if excess > 0 {
                    for victim in Array(entries.keys.prefix(excess)) { entries.removeValue(forKey: victim) }
                }
            }
            entries[key] = entry
        }
    }

    /// How many tokens are held.
    package var count: Int { entries.withLock { $0.count } }
}
