package import Foundation

/// The time source every rule reads. Injected so tests can pin "now".
package protocol WallClock: Sendable {
    /// The current instant.
    func now() -> Date
}

/// The system clock.
package struct SystemClock: WallClock {
    /// Creates the system clock.
    package init() {}
    package func now() -> Date { Date() }
}
