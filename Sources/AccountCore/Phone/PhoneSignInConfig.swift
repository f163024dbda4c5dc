/// Phone sign-in's project settings (mfa-phone-tenants.md §A.2), read from the configuration
/// resource's `signIn.phoneNumber` and `smsRegionConfig`.
package struct PhoneSignInConfig: Sendable, Equatable {
    /// Whether phone sign-in is on (default off).
    package var enabled = false
    /// Canonical number → its fixed six-digit code: no SMS, no SMS quota (§A.2).
    package var testNumbers: [String: String] = [:]
    /// Which numbers may be sent an SMS.
    package var regions = SMSRegionPolicy.allowAll

    package init(enabled: Bool = false, testNumbers: [String: String] = [:], regions: SMSRegionPolicy = .allowAll) {
        self.enabled = enabled
        self.testNumbers = testNumbers
        self.regions = regions
    }

    /// The most test numbers a project may have [FB, Admin SDK limits].
    package static let maximumTestNumbers = 10

    /// `testPhoneNumbers` as stored, checked: canonical keys (A.1), six ASCII digits each.
    package static func testNumbers(_ value: JSONValue?) throws(AccountError) -> [String: String] {
        guard let value else { return [:] }
        guard case .object(let entries) = value else { throw AccountError(.invalidConfig, "testPhoneNumbers: must be an object") }
        guard entries.count <= maximumTestNumbers else {
            throw AccountError(.invalidConfig, "testPhoneNumbers: at most \(maximumTestNumbers) entries")
        }
        var numbers: [String: String] = [:]
        for (raw, code) in entries {
            let number: String
            do { number = try PhoneNumber.normalise(raw) } catch {
                throw AccountError(.invalidConfig, "testPhoneNumbers: \(raw.prefix(32)): \(error.detail ?? "Invalid format.")")
            }
            guard case .string(let digits) = code, digits.utf8.count == 6, digits.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw AccountError(.invalidConfig, "testPhoneNumbers: \(number): the code must be 6 digits")
            }
            numbers[number] = digits
        }
        return numbers
    }
}

/// `smsRegionConfig` (§A.2): every region but some, or only some. A region admits every number
/// whose country calling code is that region's (so `US` admits all of `+1`).
package enum SMSRegionPolicy: Sendable, Equatable {
    case allowByDefault(disallowed: Set<String>)
    case allowlistOnly(allowed: Set<String>)

    package static let allowAll = SMSRegionPolicy.allowByDefault(disallowed: [])

    /// The policy a stored `smsRegionConfig` describes; regions must be ISO 3166 alpha-2 codes this
    /// server knows the calling code of.
    package init(_ value: JSONValue?) throws(AccountError) {
        guard let value else {
            self = .allowAll
            return
        }
        func regions(_ list: JSONValue?, _ name: String) throws(AccountError) -> Set<String> {
            guard let list else { return [] }
            guard case .array(let items) = list else { throw AccountError(.invalidConfig, "smsRegionConfig.\(name): must be a list") }
            var set: Set<String> = []
            for item in items {
                guard case .string(let code) = item, CallingCodes.byRegion[code] != nil else {
                    throw AccountError(
                        .invalidConfig, "smsRegionConfig.\(name): \(item.stringValue?.prefix(8) ?? "?") is not a region code")
                }
                set.insert(code)
            }
            return set
        }
        let allow = value.value(at: "allowByDefault")
        let only = value.value(at: "allowlistOnly")
        switch (allow, only) {
        case (_?, _?): throw AccountError(.invalidConfig, "smsRegionConfig: allowByDefault and allowlistOnly are exclusive")
        case (let allow?, nil): self = .allowByDefault(disallowed: try regions(allow.value(at: "disallowedRegions"), "disallowedRegions"))
        case (nil, let only?): self = .allowlistOnly(allowed: try regions(only.value(at: "allowedRegions"), "allowedRegions"))
        case (nil, nil): self = .allowAll
        }
    }

    /// Whether an SMS may go to `number` (canonical).
    package func admits(_ number: String) -> Bool {
        let regions = CallingCodes.regions(of: number)
        switch self {
        case .allowByDefault(let disallowed): return regions.isDisjoint(with: disallowed)
        case .allowlistOnly(let allowed): return !regions.isDisjoint(with: allowed)
        }
    }
}
