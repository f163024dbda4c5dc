package import Hummingbird
import Logging
package import NIOCore

/// Per-request state: Hummingbird's core storage plus the peer address sessions record.
package struct AccountRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The TCP peer's IP address, if known.
    package let remoteAddress: String?
    /// The client's connection, to tell whether it is still there (``RequestScope/clientGone``).
    package let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.channel = source.channel
    }
}
