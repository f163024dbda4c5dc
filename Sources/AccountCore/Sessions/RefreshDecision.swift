import Foundation

/// What a refresh does with the session it read (identity-toolkit.md §3.3, §4.17): a pure decision, so the
/// store reads, asks, and writes the answer.
package enum RefreshDecision: Sendable, Equatable {
    /// The presented token is the current one (or a later one the database lost, ``RefreshRules``):
    /// the session moves to the generation after the presented one, issued now.
    case rotate
    /// The previous token, presented within the grace window (a client that did not see the
    /// rotation's answer): the current generation is handed out again, nothing changes.
    case tolerate
    /// An older token, or the previous one after the grace window: a stolen token is being
    /// replayed, and the session is revoked.
    case reuse
}
