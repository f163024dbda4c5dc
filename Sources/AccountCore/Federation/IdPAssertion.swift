package import Foundation

/// What a verified IdP credential says about its user (federation-and-limits.md §A.4, "Extracted
/// assertion"). Kept, without any IdP token, behind a pending token (§A.6).
package struct IdPAssertion: Sendable, Equatable, Codable {
    package var providerID: String
    /// `sub`.
    package var rawID: String
    /// Lower-cased, when it passed §1.5.
    package var email: String?
    package var emailVerified: Bool
    package var displayName: String?
    package var photoURL: String?
    package var firstName: String?
    package var lastName: String?
    package var screenName: String?
    /// Google's `hd`.
    package var hostedDomain: String?
    /// The verified claims as a JSON object (Google: its userinfo shape).
    package var rawUserInfo: String
    /// The non-standard claims (`firebase.sign_in_attributes`), a JSON object; nil when none.
    package var signInAttributes: String?

    /// Creates an assertion.
    package init(
        providerID: String, rawID: String, email: String? = nil, emailVerified: Bool = false, displayName: String? = nil,
        photoURL: String? = nil, firstName: String? = nil, lastName: String? = nil, screenName: String? = nil,
        hostedDomain: String? = nil, rawUserInfo: String = "{}", signInAttributes: String? = nil
    ) {
        self.providerID = providerID
        self.rawID = rawID
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.photoURL = photoURL
        self.firstName = firstName
        self.lastName = lastName
        self.screenName = screenName
        self.hostedDomain = hostedDomain
        self.rawUserInfo = rawUserInfo
        self.signInAttributes = signInAttributes
    }

    /// `federatedId` (§A.4): Google's URL form, `<providerId>/<sub>` otherwise.
    package var federatedID: String {
        providerID == "google.com" ? "https://accounts.google.com/\(rawID)" : "\(providerID)/\(rawID)"
    }

    /// The assertion as a JSON object with its property names as keys (what `Codable` reads back),
    /// without Foundation's encoder: it is written with every federated sign-in.
    package var jsonText: String {
        var object: [String: JSONValue] = [
            "providerID": .string(providerID), "rawID": .string(rawID), "emailVerified": .bool(emailVerified),
            "rawUserInfo": .string(rawUserInfo),
        ]
        for (key, value) in [
            ("email", email), ("displayName", displayName), ("photoURL", photoURL), ("firstName", firstName), ("lastName", lastName),
            ("screenName", screenName), ("hostedDomain", hostedDomain), ("signInAttributes", signInAttributes),
        ] {
            if let value { object[key] = .string(value) }
        }
        return JSONValue.object(object).serialized()
    }

    /// The link this assertion makes.
    package func identity(linkedAt: Date) -> FederatedIdentity {
        FederatedIdentity(
            providerID: providerID, rawID: rawID, email: email, displayName: displayName, photoURL: photoURL, linkedAt: linkedAt)
    }
}
