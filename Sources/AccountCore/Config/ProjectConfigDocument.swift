import Foundation

/// The project configuration resource `v2/projects/{p}/config` (mfa-phone-tenants.md §0.4) as
/// stored: the members an admin set through it, as JSON, checked. Members that are views of the
/// server's own configuration (`signIn.email`, `authorizedDomains`…) are not stored here; the API
/// layer composes them into the resource.
package struct ProjectConfigDocument: Sendable, Equatable {
    /// The stored members (an object).
    package private(set) var stored: JSONValue
    /// `signIn.phoneNumber` and `smsRegionConfig`, read.
    package private(set) var phone: PhoneSignInConfig
    /// `mfa`, read (§B.1).
    package var mfa: MFAConfig { MFAConfig(stored.value(at: "mfa")) }
    /// `authorizedDomains` as stored (Corrections 11: writable); nil until first stored, when the
    /// server's `ACCOUNTD_AUTHORIZED_DOMAINS` applies.
    package private(set) var authorizedDomains: [String]?

    /// Every member the resource schema has [FB schema `GoogleCloudIdentitytoolkitAdminV2Config`];
    /// a body member outside it is refused.
    package static let schemaMembers: Set<String> = [
        "name", "signIn", "notification", "quota", "monitoring", "multiTenant", "authorizedDomains", "subtype", "client", "mfa",
        "blockingFunctions", "recaptchaConfig", "smsRegionConfig", "autodeleteAnonymousUsers", "passwordPolicyConfig",
        "emailPrivacyConfig", "mobileLinksConfig", "defaultHostingSite", "hostingSite",
    ]

    /// The members stored here, as update-mask roots: a mask path under one of them replaces it.
    package static let storedRoots = [
        "signIn.phoneNumber", "smsRegionConfig", "mfa", "multiTenant", "blockingFunctions", "notification", "monitoring",
        "autodeleteAnonymousUsers", "mobileLinksConfig", "recaptchaConfig", "quota", "defaultHostingSite", "authorizedDomains",
        // Accepted, stored and echoed with no effect here (Corrections 12).
        "passwordPolicyConfig", "client.permissions", "subtype", "hostingSite",
    ]

    /// A stored document, checked.
    package init(stored: JSONValue = .object([:])) throws(AccountError) {
        guard case .object = stored else { throw AccountError(.invalidConfig, "the configuration must be an object") }
        self.stored = stored
        self.phone = PhoneSignInConfig(
            enabled: stored.value(at: "signIn.phoneNumber.enabled") == .bool(true),
            testNumbers: try PhoneSignInConfig.testNumbers(stored.value(at: "signIn.phoneNumber.testPhoneNumbers")),
            regions: try SMSRegionPolicy(stored.value(at: "smsRegionConfig")))
        try Self.checkMFA(stored.value(at: "mfa"))
        // §B.1: a TOTP config given without its window gets 5, stored so that it stays 5.
        if case .array(var providers)? = stored.value(at: "mfa.providerConfigs") {
            for index in providers.indices where providers[index].value(at: "totpProviderConfig") != nil {
                if providers[index].value(at: "totpProviderConfig.adjacentIntervals") == nil {
                    _ = providers[index].set("totpProviderConfig.adjacentIntervals", to: .int(5))
                }
            }
            _ = self.stored.set("mfa.providerConfigs", to: .array(providers))
        }
        self.authorizedDomains = try stored.value(at: "authorizedDomains").map(Self.domains)
        // Stored and echoed as they are compared: lower-cased, once each.
        if let domains = authorizedDomains { _ = self.stored.set("authorizedDomains", to: .array(domains.map(JSONValue.string))) }
        if case .object(let templates)? = stored.value(at: "notification.sendEmail"),
            templates.values.contains(where: { $0.value(at: "subject") != nil })
        {
            throw AccountError(.emailTemplateUpdateNotAllowed)
        }
        // Output only: the SMS text is the server's (§A.7).
        _ = self.stored.set("notification.sendSms.smsTemplate", to: nil)
    }

    /// The document after a PATCH (§0.4): masked members replaced by the body's (absent ones back to
    /// their default), no mask = every stored member replaced. Unknown mask paths, and paths
    /// indexing into a scalar or list, are ignored. The caller checks the members this document
    /// does not store.
    package func patched(with body: [String: JSONValue], mask: [String]?) throws(AccountError) -> ProjectConfigDocument {
        for name in body.keys.sorted() where !Self.schemaMembers.contains(name) {
            throw AccountError(
                .malformedRequest, "Invalid JSON payload received. Unknown name \"\(name.prefix(64))\" at 'config': Cannot find field.")
        }
        let source = JSONValue.object(body)
        var next = stored
        if let mask {
            for path in mask {
                if Self.storedRoots.contains(where: { path == $0 || path.hasPrefix($0 + ".") }) {
                    _ = next.set(path, to: source.value(at: path))
                } else {
                    // A parent of stored members (`signIn`): each of them.
                    for root in Self.storedRoots where root.hasPrefix(path + ".") { _ = next.set(root, to: source.value(at: root)) }
                }
            }
        } else {
            for root in Self.storedRoots { _ = next.set(root, to: source.value(at: root)) }
        }
        return try ProjectConfigDocument(stored: next)
    }

    /// `authorizedDomains`: host names or IP literals, lower-cased; a scheme, path, port or wildcard
    /// is refused (Corrections 11).
    private static func domains(_ value: JSONValue) throws(AccountError) -> [String] {
        guard case .array(let items) = value else { throw AccountError(.invalidAuthorizedDomain, "authorizedDomains must be a list") }
        guard items.count <= 1000 else { throw AccountError(.invalidAuthorizedDomain, "at most 1000 domains") }
        var domains: [String] = []
        for item in items {
            guard case .string(let raw) = item else { throw AccountError(.invalidAuthorizedDomain, "a domain must be a string") }
            let domain = raw.lowercased()
            let ipv6 =
                domain.hasPrefix("[") && domain.hasSuffix("]") && domain.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" }
            let host =
                !domain.isEmpty && domain.utf8.count <= 253
                && domain.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                    (1...63).contains(label.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                        && label.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-") }
                }
            guard ipv6 || host else {
                throw AccountError(.invalidAuthorizedDomain, "\(raw.prefix(64)) is not a domain (no scheme, path, port or wildcard)")
            }
            if !domains.contains(domain) { domains.append(domain) }
        }
        return domains
    }

    /// `mfa`'s enum and range (§B.1); the rest of MFA is stored for the MFA routes.
    private static func checkMFA(_ mfa: JSONValue?) throws(AccountError) {
        guard let mfa else { return }
        if let state = mfa.value(at: "state"), !["DISABLED", "ENABLED", "MANDATORY", "STATE_UNSPECIFIED"].contains(state.stringValue ?? "")
        {
            throw AccountError(
                .malformedRequest,
                "Invalid value at 'config.mfa.state' (type.googleapis.com/google.cloud.identitytoolkit.admin.v2.MultiFactorAuthConfig.State), \"\((state.stringValue ?? "").prefix(64))\""
            )
        }
        if case .array(let providers)? = mfa.value(at: "providerConfigs") {
            for provider in providers {
                if let intervals = provider.value(at: "totpProviderConfig.adjacentIntervals"),
                    !(0...10).contains(intervals.intValue ?? -1)
                {
                    throw AccountError(
                        .invalidAdjacentIntervalRange,
                        "Allowed number of adjacent intervals must be between 0 and 10, inclusive")
                }
            }
        }
    }
}
