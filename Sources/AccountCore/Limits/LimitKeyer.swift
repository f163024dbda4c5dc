import Foundation

/// Turns a bucket and a value (an address, an email) into the key the limiter stores: a keyed
/// hash, so the tables hold no address or email in plain text (§E.2).
package protocol LimitKeyer: Sendable {
    func key(_ bucket: String, _ value: String) -> [UInt8]
}
