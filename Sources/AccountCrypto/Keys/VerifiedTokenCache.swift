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
/// token's `exp`; when the cache is full (in entries or in bytes), expired entries go first, then
/// arbitrary ones until an eighth of it is free.
package final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let kid: String
        let payload: [String: JSONValue]
        /// The token's `exp`, in seconds since 1970.
        let expires: Int64
        /// What the entry is counted as against the byte budget: the token's length.
        let bytes: Int
    }

    private struct Contents {
        var entries: [SHA256Digest: Entry] = [:]
        var bytes = 0

        mutating func remove(_ key: SHA256Digest) {
            if let old = entries.removeValue(forKey: key) { bytes -= old.bytes }
        }
    }

    /// What one ordinary token costs held (measured: 1,968 bytes each over 10,000 tokens).
    package static let bytesPerEntry = 2048
    /// The largest token held; a larger one (a 600 KB display name makes an 800 KB token) is
    /// verified every time and never kept, so no caller can fill memory with a few huge tokens.
    package static let largestToken = 8 << 10

    private let contents = Mutex(Contents())
    /// The most tokens held; 0 turns the cache off (``key(_:)`` gives no key).
    private let capacity: Int
    /// The most bytes of tokens held: the capacity at the size of an ordinary token.
    package let byteBudget: Int

    /// A cache of at most `capacity` tokens (0: nothing is cached) and `capacity` ×
    /// ``bytesPerEntry`` bytes of them.
    package init(capacity: Int) {
        self.capacity = max(0, capacity)
        self.byteBudget = self.capacity * Self.bytesPerEntry
    }

    /// The key `token` is held under; nil when the cache is off, or the token too large to hold,
    /// which then skips the hashing too.
    func key(_ token: [UInt8]) -> SHA256Digest? {
        capacity > 0 && token.count <= Self.largestToken ? SHA256.hash(data: token) : nil
    }

    /// The entry for `key` if there is one that has not expired at `now` (seconds since 1970).
    func entry(_ key: SHA256Digest, now: Int64) -> Entry? {
        contents.withLock { contents in
            guard let entry = contents.entries[key] else { return nil }
            guard entry.expires > now else {
                contents.remove(key)
                return nil
            }
            return entry
        }
    }

    /// Remembers a verified token of `bytes` bytes whose `exp` lies after `now`; tokens without
    /// one, or larger than ``largestToken``, are not held.
    func store(_ key: SHA256Digest, kid: String, payload: [String: JSONValue], bytes: Int, now: Int64) {
        guard bytes <= Self.largestToken, let expires = payload["exp"]?.intValue, expires > now else { return }
        let entry = Entry(kid: kid, payload: payload, expires: expires, bytes: bytes)
        contents.withLock { contents in
            if let old = contents.entries[key] { contents.bytes -= old.bytes }
            if contents.entries[key] == nil, contents.entries.count >= capacity || contents.bytes + bytes > byteBudget {
                // Make room for an eighth at once, so that a full cache is swept once per eighth of
                // its capacity, not on every insert.
                contents.entries = contents.entries.filter { $0.value.expires > now }
                contents.bytes = contents.entries.values.reduce(0) { $0 + $1.bytes }
                let keepCount = capacity - max(1, capacity / 8)
                let keepBytes = byteBudget - max(Self.largestToken, byteBudget / 8)
                var victims = contents.entries.keys.makeIterator()
                while contents.entries.count > keepCount || contents.bytes > keepBytes, let victim = victims.next() {
                    contents.remove(victim)
                }
            }
            contents.entries[key] = entry
            contents.bytes += bytes
        }
    }

    /// How many tokens are held.
    package var count: Int { contents.withLock { $0.entries.count } }

    /// How many bytes of tokens are held (never above ``byteBudget``).
    package var bytes: Int { contents.withLock { $0.bytes } }
}
