import Foundation

/// ActionCodeSettings of an email action (identity-toolkit.md §4.3), with the link domains the project
/// configured.
package struct ActionCodeSettings: Sendable, Equatable, Codable {
    package var continueURL: String?
    package var canHandleCodeInApp = false
    package var iOSBundleID: String?
    package var iOSAppStoreID: String?
    package var androidPackageName: String?
    package var androidInstallApp = false
    package var androidMinimumVersion: String?
    package var dynamicLinkDomain: String?
    package var linkDomain: String?

    /// No settings.
    package init() {}

    /// identity-toolkit.md §4.3 step 5, in order; never depends on whether an account exists. The
    /// app fields, stored with the code and written into its link, are bounded first (decision 17).
    package func validate(kind: ActionCodeKind, project: ProjectSettings, domains: [String]) throws(AccountError) {
        try FieldLimits.check(iOSBundleID, "iOSBundleId", FieldLimits.appField)
        try FieldLimits.check(iOSAppStoreID, "iOSAppStoreId", FieldLimits.appField)
        try FieldLimits.check(androidPackageName, "androidPackageName", FieldLimits.appField)
        try FieldLimits.check(androidMinimumVersion, "androidMinimumVersion", FieldLimits.appField)
        if let continueURL {
            guard let host = Self.httpHost(continueURL) else { throw AccountError(.invalidContinueURI) }
            guard ProjectSettings.isAuthorized(host: host, in: domains) else {
                throw AccountError(.unauthorizedDomain, "Domain not allowlisted by project")
            }
        } else if kind == .emailSignIn || canHandleCodeInApp || iOSBundleID != nil || iOSAppStoreID != nil
            || androidPackageName != nil || androidInstallApp || androidMinimumVersion != nil || dynamicLinkDomain != nil
            || linkDomain != nil
        {
            throw AccountError(.missingContinueURI)
        }
        if (androidInstallApp || androidMinimumVersion != nil) && androidPackageName == nil {
            throw AccountError(.missingAndroidPackageName)
        }
        if iOSAppStoreID != nil && iOSBundleID == nil { throw AccountError(.missingIOSBundleID) }
        if let dynamicLinkDomain, !project.dynamicLinkDomains.contains(dynamicLinkDomain.lowercased()) {
            throw AccountError(.invalidDynamicLinkDomain)
        }
        if let linkDomain, !project.linkDomains.contains(linkDomain.lowercased()) {
            throw AccountError(.invalidHostingLinkDomain)
        }
        if kind == .emailSignIn && !canHandleCodeInApp {
            throw AccountError(.invalidRequestType, "EMAIL_SIGNIN requires canHandleCodeInApp=true")
        }
    }

    /// The host of an absolute http(s) URL without userinfo, at most 2048 bytes.
    package static func httpHost(_ raw: String) -> String? {
        guard raw.utf8.count <= 2048, let components = URLComponents(string: raw),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
        else { return nil }
        return host.lowercased()
    }

    /// The stored form.
    package var json: String {
        (try? String(decoding: JSONEncoder().encode(self), as: UTF8.self)) ?? "{}"
    }

    /// Builds the action link (identity-toolkit.md §4.3 "Link format"): the web link to the action handler,
    /// wrapped in an app link on a link domain when the code is handled in an app.
    package func link(
        kind: ActionCodeKind, code: String, apiKey: String, lang: String, project: ProjectSettings
    ) -> String {
        var web = URLComponents(string: project.actionHandlerURL) ?? URLComponents()
        var items = [
            URLQueryItem(name: "mode", value: kind.mode), URLQueryItem(name: "oobCode", value: code),
            URLQueryItem(name: "apiKey", value: apiKey),
        ]
        if let continueURL { items.append(URLQueryItem(name: "continueUrl", value: continueURL)) }
        items.append(URLQueryItem(name: "lang", value: lang))
        web.percentEncodedQueryItems = items.map { URLQueryItem(name: $0.name, value: $0.value.map(Self.formEncode)) }
        let webLink = web.string ?? project.actionHandlerURL
        guard canHandleCodeInApp, iOSBundleID != nil || androidPackageName != nil else { return webLink }
        let domain = linkDomain ?? dynamicLinkDomain ?? project.linkDomains.first ?? "localhost"
        var app = [("link", webLink)]
        if let iOSBundleID { app.append(("ibi", iOSBundleID)) }
        if let iOSAppStoreID { app.append(("isi", iOSAppStoreID)) }
        if let androidPackageName { app.append(("apn", androidPackageName)) }
        if let androidMinimumVersion { app.append(("amv", androidMinimumVersion)) }
        if !androidInstallApp { app.append(("afl", webLink)) }
        return "https://\(domain)/__/auth/links?" + app.map { "\($0.0)=\(Self.formEncode($0.1))" }.joined(separator: "&")
    }

    /// application/x-www-form-urlencoded value encoding (unreserved characters kept).
    package static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

extension ProjectSettings {
    /// identity-toolkit.md §4.3 5.1: equal to an authorized domain or its subdomain at a label boundary; IP
    /// literals must match exactly.
    package static func isAuthorized(host: String, in authorizedDomains: [String]) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let isIP = host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return authorizedDomains.contains { domain in
            let domain = domain.lowercased()
            return host == domain || (!isIP && host.hasSuffix("." + domain))
        }
    }
}
