import Foundation

/// The action page's message catalogues, by language. Values are plain text with `{name}`
/// placeholders; the renderer escapes them. Operators add or override entries with
/// `messages.LANG.json` files (a flat object) in the templates folder.
package struct ActionPageMessages: Sendable {
    /// Catalogues by language code (`en`, `fr`).
    package var catalogues: [String: [String: String]]

    /// The built-in English and French catalogues.
    package init(
        catalogues: [String: [String: String]] = [
            "en": ActionPageMessages.english, "fr": ActionPageMessages.french,
        ]
    ) {
        self.catalogues = catalogues
    }

    /// The language served for a requested `lang` (`fr-CA` → `fr`); English when unknown.
    package func language(for requested: String?) -> String {
        guard let requested, !requested.isEmpty else { return "en" }
        let lowered = requested.lowercased().replacingOccurrences(of: "_", with: "-")
        if catalogues[lowered] != nil { return lowered }
        let primary = String(lowered.prefix { $0 != "-" })
        return catalogues[primary] != nil ? primary : "en"
    }

    /// The text of `key` in `lang` with `{name}` placeholders filled (falls back to English).
    package func text(_ key: String, _ lang: String, _ arguments: [String: String] = [:]) -> String {
        var text = catalogues[lang]?[key] ?? catalogues["en"]?[key] ?? key
        for (name, value) in arguments { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
        return text
    }

    /// English.
    package static let english: [String: String] = [
        "continue": "Continue",
        "footer": "You can close this page once you are done.",
        "verifyEmail.confirm.title": "Verify your email",
        "verifyEmail.confirm.body": "Confirm that {email} is your email address.",
        "verifyEmail.confirm.submit": "Verify my email",
        "change.confirm.title": "Change your sign-in email",
        "change.confirm.body": "Confirm that you want to sign in with {email} from now on.",
        "change.confirm.submit": "Change my email",
        "recover.confirm.title": "Restore your sign-in email",
        "recover.confirm.body": "Your sign-in email was changed. Restore it to {email}?",
        "recover.confirm.submit": "Restore my email",
        "revert.confirm.title": "Remove a second factor",
        "revert.confirm.body": "A second sign-in step was added to the account {email}. Remove it and sign out everywhere?",
        "revert.confirm.submit": "Remove the second factor",
        "revert.title": "The second factor has been removed",
        "revert.body": "Every session of {email} was signed out. If you did not add it, reset your password now.",
        "verifyEmail.title": "Your email has been verified",
        "verifyEmail.body": "You can now sign in with {email}.",
        "reset.title": "Reset your password",
        "reset.body": "Choose a new password for {email}.",
        "reset.label": "New password",
        "reset.policy": "Use at least {min} characters.",
        "reset.submit": "Save password",
        "reset.done.title": "Your password has been changed",
        "reset.done.body": "You can now sign in to {product} with your new password.",
        "reset.weak": "This password is too short. Use at least {min} characters.",
        "reset.tooLong": "This password is too long. Use at most {max} characters.",
        "recover.title": "Your sign-in email has been restored",
        "recover.body": "Your sign-in email is back to {email}.",
        "recover.advice": "If you did not ask to change it, someone else may be using your account. Reset your password now.",
        "recover.submit": "Send me a password reset email",
        "recover.sent.title": "Check your inbox",
        "recover.sent.body": "We sent instructions for resetting your password to {email}.",
        "change.title": "Your email has been changed",
        "change.body": "You can now sign in with {email}.",
        "error.mode.title": "This link cannot be used here",
        "error.mode.body": "The link does not name an action this page handles. Make sure you opened the whole link from your email.",
        "error.missing.title": "This link is incomplete",
        "error.missing.body": "Part of the link is missing. Open it again from your email, or copy the whole address into your browser.",
        "error.invalid.title": "This link is no longer valid",
        "error.invalid.body": "It may have been used already, or replaced by a newer link. Go back to the app and ask for a new one.",
        "error.expired.title": "This link has expired",
        "error.expired.body": "For your security, links only work for a limited time. Go back to the app and ask for a new one.",
        "error.disabled.title": "This account has been disabled",
        "error.disabled.body": "Contact the team behind {product} if you think this is a mistake.",
        "error.continue.title": "This link points somewhere it should not",
        "error.continue.body":
            "Its destination is not on a domain this project allows, so it was not followed. Ask the app for a new link.",
        "error.csrf.title": "This form could not be accepted",
        "error.csrf.body": "The form was not sent from this page. Open the link from your email again and try once more.",
        "error.emailExists.title": "That address is already in use",
        "error.emailExists.body": "Another account now uses this email address, so the change could not be made.",
        "error.passwordDisabled.title": "Password sign-in is turned off",
        "error.passwordDisabled.body": "Passwords cannot be set for {product} at the moment.",
        "error.tooMany.title": "Too many attempts",
        "error.tooMany.body": "Too many requests came from your network. Please try again later.",
        "error.unavailable.title": "Something went wrong",
        "error.unavailable.body": "We could not complete this action. Please try again in a moment.",
    ]

    /// French.
    package static let french: [String: String] = [
        "continue": "Continuer",
        "footer": "Vous pouvez fermer cette page une fois terminé.",
        "verifyEmail.confirm.title": "Validez votre adresse e-mail",
        "verifyEmail.confirm.body": "Confirmez que {email} est bien votre adresse e-mail.",
        "verifyEmail.confirm.submit": "Valider mon adresse",
        "change.confirm.title": "Changer votre adresse de connexion",
        "change.confirm.body": "Confirmez que vous voulez désormais vous connecter avec {email}.",
        "change.confirm.submit": "Changer mon adresse",
        "recover.confirm.title": "Rétablir votre adresse de connexion",
        "recover.confirm.body": "Votre adresse de connexion a été modifiée. La rétablir à {email} ?",
        "recover.confirm.submit": "Rétablir mon adresse",
        "revert.confirm.title": "Retirer un second facteur",
        "revert.confirm.body":
            "Une seconde étape de connexion a été ajoutée au compte {email}. La retirer et déconnecter toutes les sessions ?",
        "revert.confirm.submit": "Retirer le second facteur",
        "revert.title": "Le second facteur a été retiré",
        "revert.body":
            "Toutes les sessions de {email} ont été déconnectées. Si vous ne l'avez pas ajouté, réinitialisez votre mot de passe.",
        "verifyEmail.title": "Votre adresse e-mail a été validée",
        "verifyEmail.body": "Vous pouvez désormais vous connecter avec {email}.",
        "reset.title": "Réinitialiser votre mot de passe",
        "reset.body": "Choisissez un nouveau mot de passe pour {email}.",
        "reset.label": "Nouveau mot de passe",
        "reset.policy": "Utilisez au moins {min} caractères.",
        "reset.submit": "Enregistrer le mot de passe",
        "reset.done.title": "Votre mot de passe a été modifié",
        "reset.done.body": "Vous pouvez maintenant vous connecter à {product} avec votre nouveau mot de passe.",
        "reset.weak": "Ce mot de passe est trop court. Utilisez au moins {min} caractères.",
        "reset.tooLong": "Ce mot de passe est trop long. Utilisez au plus {max} caractères.",
        "recover.title": "Votre adresse de connexion a été rétablie",
        "recover.body": "Votre adresse de connexion est de nouveau {email}.",
        "recover.advice":
            "Si vous n’avez pas demandé ce changement, quelqu’un d’autre utilise peut-être votre compte. Réinitialisez votre mot de passe dès maintenant.",
        "recover.submit": "M’envoyer un e-mail de réinitialisation",
        "recover.sent.title": "Consultez votre boîte de réception",
        "recover.sent.body": "Nous avons envoyé les instructions de réinitialisation à {email}.",
        "change.title": "Votre adresse e-mail a été modifiée",
        "change.body": "Vous pouvez désormais vous connecter avec {email}.",
        "error.mode.title": "Ce lien ne peut pas être utilisé ici",
        "error.mode.body":
            "Le lien ne désigne aucune action prise en charge par cette page. Vérifiez que vous avez ouvert le lien complet depuis votre e-mail.",
        "error.missing.title": "Ce lien est incomplet",
        "error.missing.body":
            "Une partie du lien manque. Ouvrez-le de nouveau depuis votre e-mail, ou copiez l’adresse complète dans votre navigateur.",
        "error.invalid.title": "Ce lien n’est plus valide",
        "error.invalid.body":
            "Il a peut-être déjà été utilisé ou remplacé par un lien plus récent. Retournez dans l’application pour en demander un nouveau.",
        "error.expired.title": "Ce lien a expiré",
        "error.expired.body":
            "Pour votre sécurité, les liens ne fonctionnent que pendant une durée limitée. Retournez dans l’application pour en demander un nouveau.",
        "error.disabled.title": "Ce compte a été désactivé",
        "error.disabled.body": "Contactez l’équipe de {product} si vous pensez qu’il s’agit d’une erreur.",
        "error.continue.title": "Ce lien mène vers une destination non autorisée",
        "error.continue.body":
            "Sa destination n’est pas sur un domaine autorisé par ce projet ; elle n’a donc pas été suivie. Demandez un nouveau lien à l’application.",
        "error.csrf.title": "Ce formulaire n’a pas pu être accepté",
        "error.csrf.body": "Le formulaire n’a pas été envoyé depuis cette page. Ouvrez de nouveau le lien de votre e-mail et réessayez.",
        "error.emailExists.title": "Cette adresse est déjà utilisée",
        "error.emailExists.body": "Un autre compte utilise désormais cette adresse ; le changement n’a pas pu être effectué.",
        "error.passwordDisabled.title": "La connexion par mot de passe est désactivée",
        "error.passwordDisabled.body": "Il n’est pas possible de définir un mot de passe pour {product} pour le moment.",
        "error.tooMany.title": "Trop de tentatives",
        "error.tooMany.body": "Trop de demandes proviennent de votre réseau. Veuillez réessayer plus tard.",
        "error.unavailable.title": "Une erreur s’est produite",
        "error.unavailable.body": "Nous n’avons pas pu terminer cette action. Veuillez réessayer dans un instant.",
    ]
}
