package import Foundation

/// One verification SMS (mfa-phone-tenants.md §A.7), as a transport delivers it.
package struct SMSMessage: Sendable, Equatable, Codable {
    /// Stable across retries: the webhook's idempotency key.
    package var messageID: String
    /// The canonical number.
    package var to: String
    package var code: String
    package var text: String
    package var locale: String
    /// `SIGN_IN_OR_SIGN_UP`, `MULTI_FACTOR_ENROLLMENT` or `MULTI_FACTOR_SIGN_IN`.
    package var purpose: String
    package var expiresAt: Date
    package var tenantID: String?
    package var appSignatureHash: String?

    package init(
        messageID: String, to: String, code: String, text: String, locale: String, purpose: String, expiresAt: Date,
        tenantID: String? = nil, appSignatureHash: String? = nil
    ) {
        self.messageID = messageID
        self.to = to
        self.code = code
        self.text = text
        self.locale = locale
        self.purpose = purpose
        self.expiresAt = expiresAt
        self.tenantID = tenantID
        self.appSignatureHash = appSignatureHash
    }

    /// `raw` when it is an Android SMS Retriever app hash (11 characters of base64), else nil.
    package static func appSignatureHash(_ raw: String) -> String? {
        let bytes = Array(raw.utf8)
        let allowed = { (byte: UInt8) in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 43 || byte == 47
        }
        return bytes.count == 11 && bytes.allSatisfy(allowed) ? raw : nil
    }

    /// The SMS text [FB template `%LOGIN_CODE% is your verification code for %APP_NAME%.`], with
    /// the Android SMS Retriever's hash on a line of its own when the app sent one.
    package static func text(code: String, appName: String, appSignatureHash: String?) -> String {
        var text = "\(code) is your verification code for \(appName)."
        if let appSignatureHash { text += "\n\(appSignatureHash)" }
        return text
    }
}

/// An SMS as the outbox keeps it: the message sealed (it holds the code) under the key-encryption
/// key, bound to its id; the worker opens it to deliver it, then erases it.
package struct SealedSMS: Sendable {
    package var messageID: String
    package var sealed: [UInt8]
    package var kekID: String
    /// Undelivered by then, it is dropped: the code is dead.
    package var expiresAt: Date

    package init(messageID: String, sealed: [UInt8], kekID: String, expiresAt: Date) {
        self.messageID = messageID
        self.sealed = sealed
        self.kekID = kekID
        self.expiresAt = expiresAt
    }

    /// The sealing context of message `id`.
    package static func context(_ id: String) -> String { "accountd sms v1:" + id }
}

/// Delivers SMS (log, webhook). Throwing means "not delivered, try again later", unless the error
/// is a ``DeliveryFailure`` that says no later attempt can deliver it.
package protocol SMSTransport: Sendable {
    func send(_ message: SMSMessage) async throws
}
