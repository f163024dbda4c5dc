public import Hummingbird
public import Logging
import NIOCore

/// Per-request state: Hummingbird's core storage plus the peer address sessions record.
package struct AccountRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The TCP peer's IP address, if known.
    package let remoteAddress: String?

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
    }
}
