import AccountCore

/// `accounts:sendVerificationCode` (mfa-phone-tenants.md §A.4): a code to a phone number. The app
/// verification fields (`recaptchaToken`, `playIntegrityToken`, …) are accepted and ignored (§A.3).
enum SendVerificationCodeRPC {
    struct Response: Encodable, Sendable {
        var sessionInfo: String
    }

    static func endpoint(_ service: PhoneSignInService) -> RPCEndpoint {
        RPCEndpoint { call in
            let body = call.body
            let number: String?
            switch body.value("phoneNumber") {
            case .string(let text)?: number = text
            default: number = nil  // absent or not a string: A.1's `Invalid format.`
            }
            let hash = body.value("autoRetrievalInfo")?.value(at: "appSignatureHash")?.stringValue
            let sessionInfo = try await service.sendVerificationCode(
                PhoneSignInService.SendRequest(
                    phoneNumber: number, tenantID: try body.string("tenantId"), appSignatureHash: hash.flatMap { $0.isEmpty ? nil : $0 },
                    locale: call.locale, ipAddress: call.limitedAddress))
            return try WireEncoding.response(Response(sessionInfo: sessionInfo))
        }
    }
}
