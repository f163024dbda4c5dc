package import AccountCore
package import Foundation
import Hummingbird

/// The v2 second-factor RPCs (mfa-phone-tenants.md §B.5–B.9). Their business errors answer in the
/// v2 shape (§0.1): `status` `INVALID_ARGUMENT`, no `errors` array.
enum MFARPC {
    static func startEnrollment(_ service: MFAService) -> RPCEndpoint {
        v2 { call in
            let body = call.body
            var request = MFAService.EnrollmentStart()
            request.idToken = try body.string("idToken")
            request.tenantID = try body.string("tenantId")
            let phoneInfo = body.value("phoneEnrollmentInfo")
            request.phoneInfoPresent = phoneInfo != nil
            request.totpInfoPresent = body.value("totpEnrollmentInfo") != nil
            request.phoneNumber = phoneInfo?.value(at: "phoneNumber")?.stringValue
            request.appSignatureHash =
                phoneInfo?.value(at: "autoRetrievalInfo")?.value(at: "appSignatureHash")?.stringValue.flatMap(SMSMessage.appSignatureHash)
            request.locale = ActionLanguage.tag(call.locale)
            request.ipAddress = call.limitedAddress
            switch try await service.startEnrollment(request) {
            case .sms(let sessionInfo):
                return WireEncoding.response(json: .object(["phoneSessionInfo": .object(["sessionInfo": .string(sessionInfo)])]))
            case .totp(let secret, let sessionInfo, let finalizeBy):
                return WireEncoding.response(
                    json: .object([
                        "totpSessionInfo": .object([
                            "sharedSecretKey": .string(secret), "verificationCodeLength": .int(6), "hashingAlgorithm": .string("SHA1"),
                            "periodSec": .int(30), "sessionInfo": .string(sessionInfo),
                            "finalizeEnrollmentTime": .string(MFAWire.timestamp(finalizeBy)),
                        ])
                    ]))
            }
        }
    }

    static func finalizeEnrollment(_ service: MFAService, access: AccessPolicy) -> RPCEndpoint {
        v2 { call in
            let body = call.body
            var request = MFAService.EnrollmentFinalize(client: call.client)
            request.idToken = try body.string("idToken")
            request.tenantID = try body.string("tenantId")
            request.displayName = body.value("displayName")?.stringValue
            let phone = body.value("phoneVerificationInfo")
            let totp = body.value("totpVerificationInfo")
            request.phoneInfoPresent = phone != nil
            request.totpInfoPresent = totp != nil
            request.sessionInfo = (phone ?? totp)?.value(at: "sessionInfo")?.stringValue
            request.code = phone?.value(at: "code")?.stringValue ?? totp?.value(at: "verificationCode")?.stringValue
            request.apiKey = call.apiKey(access)
            let tokens = try await service.finalizeEnrollment(request)
            var answer: [String: JSONValue] = ["idToken": .string(tokens.idToken), "refreshToken": .string(tokens.refreshToken)]
            if request.totpInfoPresent { answer["totpAuthInfo"] = .object([:]) }
            return WireEncoding.response(json: .object(answer))
        }
    }

    static func withdraw(_ service: MFAService) -> RPCEndpoint {
        v2 { call in
            let tokens = try await service.withdraw(
                idToken: try call.body.string("idToken"), enrollmentID: try call.body.nonEmptyString("mfaEnrollmentId"),
                tenantID: try call.body.string("tenantId"), client: call.client)
            return WireEncoding.response(json: .object(["idToken": .string(tokens.idToken), "refreshToken": .string(tokens.refreshToken)]))
        }
    }

    static func startSignIn(_ service: MFAService) -> RPCEndpoint {
        v2 { call in
            let body = call.body
            var request = MFAService.SignInStart()
            request.pendingCredential = try body.string("mfaPendingCredential")
            request.enrollmentID = try body.string("mfaEnrollmentId")
            request.tenantID = try body.string("tenantId")
            let phoneInfo = body.value("phoneSignInInfo")
            request.phoneInfoPresent = phoneInfo != nil
            request.appSignatureHash =
                phoneInfo?.value(at: "autoRetrievalInfo")?.value(at: "appSignatureHash")?.stringValue.flatMap(SMSMessage.appSignatureHash)
            request.locale = ActionLanguage.tag(call.locale)
            request.ipAddress = call.limitedAddress
            let sessionInfo = try await service.startSignIn(request)
            return WireEncoding.response(json: .object(["phoneResponseInfo": .object(["sessionInfo": .string(sessionInfo)])]))
        }
    }

    static func finalizeSignIn(_ service: MFAService) -> RPCEndpoint {
        v2 { call in
            let body = call.body
            var request = MFAService.SignInFinalize(client: call.client)
            request.pendingCredential = try body.string("mfaPendingCredential")
            request.tenantID = try body.string("tenantId")
            request.enrollmentID = try body.string("mfaEnrollmentId")
            let phone = body.value("phoneVerificationInfo")
            let totp = body.value("totpVerificationInfo")
            request.phoneInfoPresent = phone != nil
            request.totpInfoPresent = totp != nil
            request.sessionInfo = phone?.value(at: "sessionInfo")?.stringValue
            request.code = phone?.value(at: "code")?.stringValue ?? totp?.value(at: "verificationCode")?.stringValue
            let tokens = try await service.finalizeSignIn(request)
            return WireEncoding.response(json: .object(["idToken": .string(tokens.idToken), "refreshToken": .string(tokens.refreshToken)]))
        }
    }

    /// An endpoint whose business errors answer in the v2 shape.
    private static func v2(_ handler: @escaping @Sendable (RPCCall) async throws -> Response) -> RPCEndpoint {
        RPCEndpoint { call in
            do {
                return try await handler(call)
            } catch let error as AccountError where error.code != .unavailable {
                var wire = APIError(error)
                wire.status = wire.status ?? "INVALID_ARGUMENT"
                wire.v2 = true
                throw wire
            }
        }
    }
}

/// Second factors on the wire (§B.2, §B.3).
package enum MFAWire {
    /// `mfaInfo` entries: exactly one of `phoneInfo` (obfuscated unless `obfuscate` is false) and
    /// `totpInfo`; never a secret.
    package static func info(_ factors: [MFAFactor], obfuscate: Bool) -> JSONValue {
        .array(factors.map { entry($0, obfuscate: obfuscate) })
    }

    /// One `mfaInfo` entry.
    package static func entry(_ factor: MFAFactor, obfuscate: Bool) -> JSONValue {
        var entry: [String: JSONValue] = [
            "mfaEnrollmentId": .string(factor.enrollmentID), "enrolledAt": .string(factor.enrolledAtText ?? timestamp(factor.enrolledAt)),
        ]
        if let name = factor.displayName { entry["displayName"] = .string(name) }
        switch factor.kind {
        case .phone:
            let number = factor.phoneNumber ?? ""
            entry["phoneInfo"] = .string(obfuscate ? PhoneNumber.obfuscated(number) : number)
        case .totp: entry["totpInfo"] = .object([:])
        }
        return .object(entry)
    }

    /// The members of a pending answer (§B.3): the RPC's own, the account's id and email, the
    /// credential and the factors to choose from; no tokens.
    package static func pendingFields(_ required: SecondFactorRequired) -> [String: JSONValue] {
        var fields = required.fields
        fields["localId"] = .string(required.user.localID)
        if let email = required.user.email { fields["email"] = .string(email) }
        fields["mfaPendingCredential"] = .string(required.credential)
        fields["mfaInfo"] = info(required.factors, obfuscate: true)
        for token in ["idToken", "refreshToken", "expiresIn"] { fields.removeValue(forKey: token) }
        return fields
    }

    /// Factors as an admin sends them (§B.13): `mfaInfo` entries or `mfa.enrollments`. Absent or
    /// null is none; anything but an array of objects is refused (a malformed request must never
    /// read as "remove every factor").
    package static func adminFactors(_ value: JSONValue?) throws -> [AdminFactorInput] {
        guard let value, value != .null else { return [] }
        guard case .array(let entries) = value, entries.allSatisfy({ $0.objectValue != nil }) else {
            throw MFAService.invalidArgument
        }
        return entries.compactMap { entry in
            guard let object = entry.objectValue else { return nil }
            return AdminFactorInput(
                enrollmentID: object["mfaEnrollmentId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                phoneInfo: object["phoneInfo"]?.stringValue, totp: object["totpInfo"] != nil && object["totpInfo"] != .null,
                displayName: object["displayName"]?.stringValue,
                enrolledAt: object["enrolledAt"]?.stringValue.flatMap(Self.instant),
                enrolledAtText: object["enrolledAt"]?.stringValue.flatMap { Self.instant($0) == nil ? nil : String($0.prefix(64)) })
        }
    }

    /// An RFC 3339 instant as an admin sends it (fractional seconds or none), or nil.
    static func instant(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }

    /// RFC 3339 UTC with microseconds (§B.2); an admin's or an import's factor shows its own text
    /// (correction 6).
    package static func timestamp(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let seconds = Date(timeIntervalSince1970: TimeInterval(micros / 1_000_000))
        let base = seconds.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
            .replacingOccurrences(of: "+0000", with: "").replacingOccurrences(of: "Z", with: "")
        return base + "." + String(format: "%06lld", micros % 1_000_000) + "Z"
    }
}
