import Foundation

/// What a new session starts with; the store writes it in the transaction that signs the user in.
package struct NewSession: Sendable {
    package var sessionID: String
    package var signInProvider: String
    package var signInMethod: String
    package var userAgent: String?
    package var ipAddress: String?
    package var salt: [UInt8]
    package var keyID: String
    /// A custom token's claims for this session's ID tokens (§C.4).
    package var claimsOverlay: String?
    /// The IdP's extra claims (`firebase.sign_in_attributes`, §A.10).
    package var signInAttributes: String?
    /// The second factor the sign-in passed (mfa-phone-tenants.md §B.10).
    package var secondFactor: SecondFactorClaim?

    /// Creates a draft with fresh random id and salt.
    package init(
        random: any RandomSource, keyID: String, provider: String, method: String, userAgent: String?, ipAddress: String?
    ) {
        var id = random.bytes(16)
        // Never a leading "-": accountctl would read the id as an option (`sessions revoke -…`).
        // 0xF8–0xFB encode to "-"; clearing the top bit makes them "e". Still 16 bytes.
        if id[0] >> 2 == 62 { id[0] &= 0x7F }
        self.sessionID = Base64URL.encode(id)
        self.salt = random.bytes(16)
        self.keyID = keyID
        self.signInProvider = provider
        self.signInMethod = method
        self.userAgent = userAgent.map { String($0.prefix(512)) }
        self.ipAddress = ipAddress
    }
}
