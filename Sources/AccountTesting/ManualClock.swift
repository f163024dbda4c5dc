import AccountCore
package import Foundation
import Synchronization

/// A clock only the test moves: what a test asserts about time holds however fast the machine is.
package final class ManualClock: WallClock {
    private let instant: Mutex<Date>

    /// A clock standing at `start`.
    package init(start: Date = Date()) { instant = Mutex(start) }

    package func now() -> Date { instant.withLock { $0 } }

    /// Moves "now" `seconds` ahead.
    package func advance(_ seconds: TimeInterval) { instant.withLock { $0 += seconds } }
}
