/// What every domain service consults besides its own ports: the project's rules, the clock, the
/// random source and the abuse limiter. Made once by the composition root and handed to each
/// service, so no service reaches through another for them.
package struct ServiceEnvironment: Sendable {
    package let settings: ProjectSettings
    package let clock: any WallClock
    package let random: any RandomSource
    /// The abuse limits (federation-and-limits.md §E); off unless the composition passes one.
    package let limiter: AbuseLimiter
    /// The configuration resource, whose stored members override the settings' (authorized
    /// domains); nil where nothing is stored (unit tests).
    package let configs: ProjectConfigService?
    /// Where the services report their figures (sign-ins, refusals); off unless the composition passes one.
    package let telemetry: Telemetry

    /// An environment; without a limiter, abuse limits are off.
    package init(
        settings: ProjectSettings, clock: any WallClock = SystemClock(), random: any RandomSource = SystemRandom(),
        limiter: AbuseLimiter? = nil, configs: ProjectConfigService? = nil, telemetry: Telemetry = .off
    ) {
        self.telemetry = telemetry
        self.settings = settings
        self.clock = clock
        self.random = random
        self.limiter = limiter ?? .off(clock: clock)
        self.configs = configs
    }

    /// The domains continue URLs may point to now: the configuration resource's, once stored
    /// (held on every replica through its cache), else the settings'.
    package func authorizedDomains() async throws -> [String] {
        try await configs?.current().authorizedDomains ?? settings.authorizedDomains
    }
}
