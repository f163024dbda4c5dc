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
            // Only the Android SMS Retriever's 11-character app hash reaches the SMS text: nothing
            // else a client sends is written into a message the operator pays for and signs.
            let hash = body.value("autoRetrievalInfo")?.value(at: "appSignatureHash")?.stringValue.flatMap(SMSMessage.appSignatureHash)
            let sessionInfo = try await service.sendVerificationCode(
                PhoneSignInService.SendRequest(
                    phoneNumber: number, tenantID: try body.string("tenantId"), appSignatureHash: hash,
                    locale: ActionLanguage.tag(call.locale), ipAddress: call.limitedAddress))
            return try WireEncoding.response(Response(sessionInfo: sessionInfo))
        }
    }
}
