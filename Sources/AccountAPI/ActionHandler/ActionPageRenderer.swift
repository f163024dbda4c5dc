import AccountCore
import Foundation
import HTTPTypes
package import Hummingbird
import NIOCore

/// How the action page looks: product name and logo, the layout template and the message
/// catalogues, with an operator's templates folder laid over the built-in ones.
package struct ActionPageRenderer: Sendable {
    /// The name shown on the page.
    package var productName: String
    /// An `https:` or `data:` image shown above the name, if any.
    package var logoURL: String?
    /// The layout: `{{name}}` is replaced escaped, `{{{name}}}` raw (only server-built HTML).
    package var layout: String
    /// The catalogues.
    package var messages: ActionPageMessages

    /// The headers every page carries (no scripts, no external assets, nothing cached or referred).
    package static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: https:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
        (.cacheControl, "no-store"),
        (HTTPField.Name("X-Content-Type-Options")!, "nosniff"),
    ]

    /// A renderer with the built-in layout and catalogues, overridden by `templatesDirectory`'s
    /// `layout.html` and `messages.LANG.json` when present.
    package init(productName: String, logoURL: String? = nil, templatesDirectory: String? = nil) throws {
        self.productName = productName
        self.logoURL = logoURL.flatMap { $0.hasPrefix("https://") || $0.hasPrefix("data:image/") ? $0 : nil }
        self.layout = Self.defaultLayout
        self.messages = ActionPageMessages()
        guard let templatesDirectory, !templatesDirectory.isEmpty else { return }
        let folder = URL(fileURLWithPath: templatesDirectory, isDirectory: true)
        let layoutFile = folder.appendingPathComponent("layout.html")
        if FileManager.default.fileExists(atPath: layoutFile.path) {
            layout = try String(contentsOf: layoutFile, encoding: .utf8)
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where name.hasPrefix("messages.") && name.hasSuffix(".json") {
            let lang = String(name.dropFirst("messages.".count).dropLast(".json".count)).lowercased()
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            let entries = try JSONDecoder().decode([String: String].self, from: data)
            messages.catalogues[lang, default: [:]].merge(entries) { _, new in new }
        }
    }

    /// Escapes text for HTML element content and quoted attribute values (the one escaper the
    /// emails use too).
    package static func escape(_ text: String) -> String {
        EmailTemplates.escapeHTML(text)
    }

    /// Fills `template`: `{{{name}}}` raw, `{{name}}` escaped, unknown names empty.
    package static func render(_ template: String, values: [String: String], raw: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            out += rest[..<open.lowerBound]
            let triple = rest[open.upperBound...].hasPrefix("{")
            let nameStart = triple ? rest.index(after: open.upperBound) : open.upperBound
            guard let close = rest[nameStart...].range(of: triple ? "}}}" : "}}") else {
                out += rest[open.lowerBound...]
                return out
            }
            let name = rest[nameStart..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            out += triple ? (raw[name] ?? "") : escape(values[name] ?? "")
            rest = rest[close.upperBound...]
        }
        out += rest
        return out
    }

    /// A full page: `content` is HTML the caller built from escaped parts.
    package func page(status: HTTPResponse.Status, lang: String, title: String, content: String) -> Response {
        let logo = logoURL.map { "<img class=\"logo\" src=\"\(Self.escape($0))\" alt=\"\" width=\"48\" height=\"48\">" } ?? ""
        let html = Self.render(
            layout,
            values: [
                "lang": lang, "title": title, "productName": productName, "footer": messages.text("footer", lang),
            ],
            raw: ["logo": logo, "content": content, "style": Self.stylesheet]
        )
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        for (name, value) in Self.securityHeaders { headers[name] = value }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A redirect that leaves nothing behind (no referrer, no cache).
    package static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        for (name, value) in securityHeaders { headers[name] = value }
        return Response(status: .seeOther, headers: headers)
    }

    /// The built-in layout.
    package static let defaultLayout = """
        <!doctype html>
        <html lang="{{lang}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex, nofollow">
        <title>{{title}} · {{productName}}</title>
        <style>{{{style}}}</style>
        </head>
        <body>
        <main class="card" aria-labelledby="page-title">
        <header class="brand">{{{logo}}}<span class="product">{{productName}}</span></header>
        {{{content}}}
        </main>
        <footer class="note">{{footer}}</footer>
        </body>
        </html>

        """

    /// The one inline stylesheet (contrast ≥ 4.5:1 for text, visible focus).
    package static let stylesheet = """
        *,*::before,*::after{box-sizing:border-box}
        html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;line-height:1.5;color:#1f2328;background:#f3f5f8}
        body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:24px 16px}
        .card{width:100%;max-width:440px;background:#fff;border:1px solid #d8dee4;border-radius:12px;padding:32px 28px;box-shadow:0 1px 3px rgba(31,35,40,.08),0 8px 24px rgba(31,35,40,.06)}
        .brand{display:flex;align-items:center;gap:12px;margin-bottom:24px}
        .logo{width:40px;height:40px;border-radius:8px;object-fit:contain}
        .product{font-weight:600;font-size:1rem;color:#424a53;letter-spacing:.01em}
        .icon{display:flex;align-items:center;justify-content:center;width:48px;height:48px;border-radius:50%;font-size:26px;font-weight:700;margin-bottom:16px}
        .icon.ok{background:#dafbe1;color:#116329}.icon.error{background:#ffebe9;color:#a40e26}.icon.info{background:#ddf4ff;color:#0a3069}
        h1{font-size:1.5rem;line-height:1.3;margin:0 0 12px}
        p{margin:0 0 16px;color:#424a53}
        .email{font-weight:600;color:#1f2328;overflow-wrap:anywhere}
        label{display:block;font-weight:600;margin:8px 0 6px}
        .hint{font-size:.9rem;color:#57606a;margin:0 0 16px}
        input[type=password],input[type=email]{width:100%;font:inherit;padding:10px 12px;border:1px solid #8c959f;border-radius:8px;background:#fff;color:#1f2328}
        input:focus-visible,.button:focus-visible,button:focus-visible{outline:3px solid #0969da;outline-offset:2px}
        .alert{background:#ffebe9;border:1px solid #ff8182;color:#82071e;border-radius:8px;padding:10px 12px;margin:0 0 16px}
        .button,button{display:inline-block;width:100%;text-align:center;font:inherit;font-weight:600;padding:11px 16px;border:0;border-radius:8px;background:#0550ae;color:#fff;text-decoration:none;cursor:pointer;margin-top:8px}
        .button:hover,button:hover{background:#033d8b}
        .note{margin-top:20px;font-size:.85rem;color:#57606a;text-align:center}
        @media (max-width:480px){.card{padding:24px 18px;border-radius:10px}h1{font-size:1.3rem}}
        """
}
