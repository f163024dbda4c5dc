import AccountCore
import AccountPostgres
import Testing

// A guard against a hang, not a speed check: the whole suite on two cores can take minutes.
@Suite("Email templates", .timeLimit(.minutes(5)))
struct EmailTemplatesTests {
    let link = "https://auth.example.com/__/auth/action?mode=resetPassword&oobCode=Abc-123_x&apiKey=key&lang=fr"

    @Test("every kind renders both bodies with the link, escaped in HTML", arguments: EmailKind.allCases)
    func everyKind(kind: EmailKind) {
        for lang in ["en", "fr-CA"] {
            let message = EmailTemplates.message(
                kind: kind, to: "ann@example.com", link: link, lang: lang, productName: "Acme <Beta> & Co", newEmail: "new@example.com")
            #expect(message.kind == kind)
            #expect(message.to == "ann@example.com")
            #expect(message.link == link)
            #expect(!message.subject.isEmpty && !message.subject.contains("\n"))
            #expect(message.textBody.contains("\n\(link)\n"))
            // The outbox finds the link again from the text body alone.
            #expect(PostgresOutbox.link(inTextBody: message.textBody) == link)
            let escaped = link.replacing("&", with: "&amp;")
            #expect(message.htmlBody.contains("href=\"\(escaped)\""))
            #expect(message.htmlBody.ranges(of: "href=\"\(escaped)\"").count == 2, "a button and a text link")
            #expect(message.htmlBody.contains(">\(escaped)</a>"))
            #expect(!message.htmlBody.contains(link), "the raw & never reaches the HTML")
            #expect(message.htmlBody.contains("Acme &lt;Beta&gt; &amp; Co"))
            #expect(!message.htmlBody.contains("<Beta>"))
            #expect(message.textBody.contains("Acme <Beta> & Co"))
            #expect(!message.htmlBody.contains("<style") && !message.htmlBody.contains("<script"))
            #expect(message.htmlBody.contains("<html lang=\"\(lang.hasPrefix("fr") ? "fr" : "en")\">"))
        }
    }

    @Test("French differs from English; any other language is English", arguments: EmailKind.allCases)
    func languages(kind: EmailKind) {
        func render(_ lang: String) -> EmailMessage {
            EmailTemplates.message(kind: kind, to: "ann@example.com", link: link, lang: lang, productName: "Acme")
        }
        let english = render("en")
        let french = render("fr")
        #expect(french.subject != english.subject)
        #expect(french.textBody != english.textBody)
        #expect(french.textBody.hasPrefix("Bonjour,"))
        #expect(english.textBody.hasPrefix("Hello,"))
        #expect(render("FR_fr") == french)
        #expect(render("de") == english)
        #expect(render("") == english)
    }

    @Test("the change notice names the new address and offers to restore the old one")
    func recoverEmail() {
        let message = EmailTemplates.message(
            kind: .recoverEmail, to: "old@example.com", link: link, lang: "en", productName: "Acme", newEmail: "new@example.com")
        #expect(message.textBody.contains("changed to new@example.com"))
        #expect(message.textBody.contains("If this wasn't you"))
        #expect(message.textBody.contains("old@example.com"))
        let french = EmailTemplates.message(
            kind: .recoverEmail, to: "old@example.com", link: link, lang: "fr", productName: "Acme", newEmail: "new@example.com")
        #expect(french.textBody.contains("remplacée par new@example.com"))
    }

    @Test("a product name cannot break the subject line")
    func productNameIsOneLine() {
        let message = EmailTemplates.message(kind: .verifyEmail, to: "a@example.com", link: link, lang: "en", productName: "Acme\r\nBcc: x")
        #expect(message.subject == "Verify your email for Acme Bcc: x")
    }
}
