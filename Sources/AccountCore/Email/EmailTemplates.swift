/// The wording of every email the service sends, in English and French, as a plain-text body and
/// a small HTML body (inline styles only, every value escaped). The action link is the only
/// secret a message carries; in the text body it stands alone on its own line, before any other
/// line that looks like a URL, so the outbox can find it again.
package enum EmailTemplates {
    /// Renders the message of `kind` for `to`. `lang` starting with "fr" picks French, anything else
    /// English. `newEmail` is the address an account changed to (named in the change notice sent to
    /// the old address, and in the confirmation sent to the new one; defaults to `to` there).
    package static func message(
        kind: EmailKind, to: String, link: String, lang: String, productName: String, newEmail: String? = nil
    ) -> EmailMessage {
        let french = lang.lowercased().hasPrefix("fr")
        let product = singleLine(productName)
        let copy =
            french
            ? Copy.french(kind, product: product, to: to, newEmail: newEmail)
            : Copy.english(kind, product: product, to: to, newEmail: newEmail)
        return EmailMessage(
            kind: kind,
            to: to,
            subject: copy.subject,
            textBody: text(copy, link: link),
            htmlBody: html(copy, link: link, lang: french ? "fr" : "en"),
            link: link
        )
    }

    /// Escapes `value` for HTML text and double- or single-quoted attributes.
    package static func escapeHTML(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    // MARK: Rendering

    private static func text(_ copy: Copy, link: String) -> String {
        var lines = [copy.greeting, ""]
        for paragraph in copy.beforeLink { lines += [paragraph, ""] }
        if !link.isEmpty { lines += [link, ""] }
        for paragraph in copy.afterLink { lines += [paragraph, ""] }
        lines.append(copy.signature)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func html(_ copy: Copy, link: String, lang: String) -> String {
        let href = escapeHTML(link)
        let paragraph = "margin:0 0 16px;font-size:16px;line-height:1.5;"
        var body = "<p style=\"\(paragraph)\">\(escapeHTML(copy.greeting))</p>\n"
        for text in copy.beforeLink {
            body += "<p style=\"\(paragraph)\">\(escapeHTML(text))</p>\n"
        }
        if !link.isEmpty {
            body += """
                <p style="margin:24px 0;"><a href="\(href)" style="display:inline-block;padding:12px 20px;border-radius:6px;\
                background:#1a56db;color:#ffffff;font-size:16px;font-weight:600;text-decoration:none;">\(escapeHTML(copy.button))</a></p>
                <p style="margin:0 0 16px;font-size:13px;line-height:1.5;color:#555555;">\(escapeHTML(copy.linkHint))<br>\
                <a href="\(href)" style="color:#1a56db;word-break:break-all;">\(href)</a></p>

                """
        }
        for text in copy.afterLink {
            body += "<p style=\"\(paragraph)\">\(escapeHTML(text))</p>\n"
        }
        body += "<p style=\"margin:24px 0 0;font-size:14px;color:#555555;\">\(escapeHTML(copy.signature))</p>\n"
        return """
            <!DOCTYPE html>
            <html lang="\(lang)">
            <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>\(escapeHTML(copy.subject))</title></head>
            <body style="margin:0;padding:24px;background:#f4f4f5;color:#18181b;font-family:Helvetica,Arial,sans-serif;">
            <div style="max-width:560px;margin:0 auto;padding:32px;background:#ffffff;border-radius:8px;">
            \(body)</div>
            </body>
            </html>

            """
    }

    /// Collapses line breaks and runs of spaces, so a configured name cannot break a header.
    private static func singleLine(_ value: String) -> String {
        value.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
    }

    // MARK: Wording

    /// The words of one message, without the link.
    private struct Copy {
        var subject: String
        var greeting: String
        var beforeLink: [String]
        var button: String
        var linkHint: String
        var afterLink: [String]
        var signature: String

        static func english(_ kind: EmailKind, product: String, to: String, newEmail: String?) -> Copy {
            var copy = Copy(
                subject: "", greeting: "Hello,", beforeLink: [], button: "",
                linkHint: "If the button doesn't work, copy this link into your browser:", afterLink: [],
                signature: "The \(product) team"
            )
            switch kind {
            case .verifyEmail:
                copy.subject = "Verify your email for \(product)"
                copy.beforeLink = ["Follow this link to verify your email address for \(product)."]
                copy.button = "Verify email address"
                copy.afterLink = ["If you didn't ask to verify this address, you can ignore this email."]
            case .passwordReset:
                copy.subject = "Reset your password for \(product)"
                copy.beforeLink = ["Follow this link to reset your \(product) password for your \(to) account."]
                copy.button = "Reset password"
                copy.afterLink = ["If you didn't ask to reset your password, you can ignore this email; your password stays the same."]
            case .emailSignIn:
                copy.subject = "Sign in to \(product)"
                copy.beforeLink = ["We received a request to sign in to \(product) as \(to). Follow this link to sign in."]
                copy.button = "Sign in"
                copy.afterLink = ["If you didn't ask for this link, you can ignore this email."]
            case .verifyAndChangeEmail:
                copy.subject = "Confirm your new email for \(product)"
                copy.beforeLink = ["Follow this link to make \(newEmail ?? to) the sign-in email of your \(product) account."]
                copy.button = "Confirm new email"
                copy.afterLink = [
                    "If you didn't ask to change your email, you can ignore this email; your account keeps its current address."
                ]
            case .recoverEmail:
                copy.subject = "Your sign-in email for \(product) was changed"
                copy.beforeLink = [
                    newEmail.map { "The sign-in email of your \(product) account was changed to \($0)." }
                        ?? "The sign-in email of your \(product) account was changed.",
                    "If this wasn't you, use this link to restore your email (\(to)) and secure your account.",
                ]
                copy.button = "Restore my email"
                copy.afterLink = ["If you made this change, you can ignore this email."]
            case .revertSecondFactorAddition:
                copy.subject = "A second factor was added to your \(product) account"
                copy.beforeLink = [
                    "A second sign-in step (\(newEmail ?? "a second factor")) was added to your \(product) account \(to).",
                    "If this wasn't you, use this link to remove it, then reset your password.",
                ]
                copy.button = "Remove this second factor"
                copy.afterLink = ["If you added it, you can ignore this email."]
            case .mfaWithdrawn:
                copy.subject = "A second factor was removed from your \(product) account"
                copy.beforeLink = [
                    "A second sign-in step (\(newEmail ?? "a second factor")) was removed from your \(product) account \(to).",
                    "If this wasn't you, reset your password and add your second factor again.",
                ]
                copy.afterLink = ["If you removed it, you can ignore this email."]
            }
            return copy
        }

        static func french(_ kind: EmailKind, product: String, to: String, newEmail: String?) -> Copy {
            var copy = Copy(
                subject: "", greeting: "Bonjour,", beforeLink: [], button: "",
                linkHint: "Si le bouton ne fonctionne pas, copiez ce lien dans votre navigateur :", afterLink: [],
                signature: "L'équipe \(product)"
            )
            switch kind {
            case .verifyEmail:
                copy.subject = "Validez votre adresse e-mail pour \(product)"
                copy.beforeLink = ["Suivez ce lien pour valider votre adresse e-mail pour \(product)."]
                copy.button = "Valider mon adresse e-mail"
                copy.afterLink = ["Si vous n'avez pas demandé à valider cette adresse, vous pouvez ignorer cet e-mail."]
            case .passwordReset:
                copy.subject = "Réinitialisez votre mot de passe \(product)"
                copy.beforeLink = ["Suivez ce lien pour réinitialiser le mot de passe \(product) de votre compte \(to)."]
                copy.button = "Réinitialiser le mot de passe"
                copy.afterLink = [
                    "Si vous n'avez pas demandé à réinitialiser votre mot de passe, vous pouvez ignorer cet e-mail ; "
                        + "votre mot de passe reste inchangé."
                ]
            case .emailSignIn:
                copy.subject = "Connexion à \(product)"
                copy.beforeLink = [
                    "Nous avons reçu une demande de connexion à \(product) avec l'adresse \(to). Suivez ce lien pour vous connecter."
                ]
                copy.button = "Me connecter"
                copy.afterLink = ["Si vous n'avez pas demandé ce lien, vous pouvez ignorer cet e-mail."]
            case .verifyAndChangeEmail:
                copy.subject = "Confirmez votre nouvelle adresse e-mail pour \(product)"
                copy.beforeLink = [
                    "Suivez ce lien pour faire de \(newEmail ?? to) l'adresse e-mail de connexion de votre compte \(product)."
                ]
                copy.button = "Confirmer la nouvelle adresse"
                copy.afterLink = [
                    "Si vous n'avez pas demandé ce changement, vous pouvez ignorer cet e-mail ; votre compte garde son adresse actuelle."
                ]
            case .recoverEmail:
                copy.subject = "Votre adresse e-mail de connexion à \(product) a été modifiée"
                copy.beforeLink = [
                    newEmail.map { "L'adresse e-mail de connexion de votre compte \(product) a été remplacée par \($0)." }
                        ?? "L'adresse e-mail de connexion de votre compte \(product) a été modifiée.",
                    "Si vous n'êtes pas à l'origine de ce changement, suivez ce lien pour rétablir votre adresse (\(to)) "
                        + "et sécuriser votre compte.",
                ]
                copy.button = "Rétablir mon adresse e-mail"
                copy.afterLink = ["Si vous êtes à l'origine de ce changement, vous pouvez ignorer cet e-mail."]
            case .revertSecondFactorAddition:
                copy.subject = "Un second facteur a été ajouté à votre compte \(product)"
                copy.beforeLink = [
                    "Une seconde étape de connexion (\(newEmail ?? "un second facteur")) a été ajoutée à votre compte \(product) \(to).",
                    "Si vous n'êtes pas à l'origine de cet ajout, suivez ce lien pour la retirer, puis réinitialisez votre mot de passe.",
                ]
                copy.button = "Retirer ce second facteur"
                copy.afterLink = ["Si vous l'avez ajoutée, vous pouvez ignorer cet e-mail."]
            case .mfaWithdrawn:
                copy.subject = "Un second facteur a été retiré de votre compte \(product)"
                copy.beforeLink = [
                    "Une seconde étape de connexion (\(newEmail ?? "un second facteur")) a été retirée de votre compte \(product) \(to).",
                    "Si vous n'êtes pas à l'origine de ce retrait, réinitialisez votre mot de passe et ajoutez de nouveau votre second facteur.",
                ]
                copy.afterLink = ["Si vous l'avez retirée, vous pouvez ignorer cet e-mail."]
            }
            return copy
        }
    }
}
