import Foundation
import Synchronization

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let instant: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        instant = Mutex(start)
    }

    /// The current instant.
    func now() -> Date {
        instant.withLock { $0 }
    }

    /// Moves the clock forward by `seconds`.
    func advance(_ seconds: TimeInterval) {
        instant.withLock { $0 += seconds }
    }
}
