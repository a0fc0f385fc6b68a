import Foundation
import GatehouseAPI
import GatehouseCore
import Mustache

/// Mail, SMS and page templates per language: the bundled ones, overridden file by file from
/// `GATEHOUSE_TEMPLATES_DIR` (same layout: `LANG/NAME.mustache`).
public struct TemplateCatalog: MessageRenderer {
    public static let fallbackLanguage = "en"
    let templates: [String: MustacheTemplate]
    let strings: [String: [String: String]]
    /// The strings again, each a text template (HTML-escaped once, by the page that shows it).
    let textStrings: [String: [String: MustacheTemplate]]
    public let languages: [String]

    public init(overrideDirectory: String? = nil) throws {
        var sources: [String: String] = [:]
        guard let bundled = Bundle.module.url(forResource: "templates", withExtension: nil) else {
            throw TemplateError.missing("bundled templates")
        }
        try Self.read(directory: bundled, into: &sources)
        if let overrideDirectory {
            try Self.read(directory: URL(fileURLWithPath: overrideDirectory), into: &sources)
        }
        var templates: [String: MustacheTemplate] = [:]
        var strings: [String: [String: String]] = [:]
        for (name, text) in sources {
            if name.hasSuffix("/strings.json") {
                strings[String(name.dropLast("/strings.json".count))] = try JSONDecoder().decode(
                    [String: String].self, from: Data(text.utf8))
            } else if name.hasSuffix(".mustache") {
                do {
                    templates[String(name.dropLast(".mustache".count))] = try MustacheTemplate(string: text)
                } catch {
                    throw TemplateError.invalid(name)
                }
            }
        }
        self.templates = templates
        self.strings = strings
        var textStrings: [String: [String: MustacheTemplate]] = [:]
        for (lang, table) in strings {
            for (key, raw) in table {
                textStrings[lang, default: [:]][key] = try? MustacheTemplate(string: "{{% CONTENT_TYPE:TEXT}}" + raw)
            }
        }
        self.textStrings = textStrings
        self.languages = Set(templates.keys.compactMap { $0.split(separator: "/").first.map(String.init) }).sorted()
    }

    private static func read(directory: URL, into sources: inout [String: String]) throws {
        let fm = FileManager.default
        for language in try fm.contentsOfDirectory(atPath: directory.path) {
            let folder = directory.appendingPathComponent(language)
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            for file in try fm.contentsOfDirectory(atPath: folder.path) {
                sources["\(language)/\(file)"] = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            }
        }
    }

    /// The best language for a user's `locale` or an `Accept-Language` header (q-values honoured).
    public func language(for preference: String?) -> String {
        guard let preference else { return Self.fallbackLanguage }
        let ranked = preference.split(separator: ",").enumerated().compactMap { index, part -> (String, Double, Int)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty else { return nil }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag.lowercased(), q, index)
        }.filter { $0.1 > 0 }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.2 < $1.2 }
        for (tag, _, _) in ranked {
            var primary = String(tag.split(separator: "-").first ?? "")
            // Norwegian: "no" and Nynorsk readers are served Bokmål rather than English.
            if primary == "no" || primary == "nn" { primary = "nb" }
            if languages.contains(primary) { return primary }
        }
        return Self.fallbackLanguage
    }

    public func render(
        kind: String, channel: OutboxMessage.Channel, locale: String?, variables: [String: String]
    ) throws
        -> (subject: String?, text: String, html: String?)
    {
        let lang = language(for: locale)
        func render(_ part: String) -> String? {
            (templates["\(lang)/\(kind).\(part)"] ?? templates["\(Self.fallbackLanguage)/\(kind).\(part)"])?.render(variables)
        }
        switch channel {
        case .email:
            guard let subject = render("subject"), let text = render("text") else { throw TemplateError.missing(kind) }
            return (subject.trimmingCharacters(in: .whitespacesAndNewlines), text, render("html"))
        case .sms:
            guard let text = render("sms") else { throw TemplateError.missing("\(kind).sms") }
            return (nil, text.trimmingCharacters(in: .whitespacesAndNewlines), nil)
        case .webhook, .logout:
            // A webhook's body is its event, a logout notice is signed by its transport: nothing to render.
            throw TemplateError.missing(kind)
        }
    }

    /// A hosted page in `lang`, with its strings available to the template.
    func page(_ name: String, lang: String, values: [String: Any]) -> String {
        let template = templates["\(lang)/page.\(name)"] ?? templates["\(Self.fallbackLanguage)/page.\(name)"]
        return template?.render(values) ?? ""
    }

    /// A hosted sign-in page: `page.NAME` inside `page.hosted_layout`, with the page's strings
    /// (``hostedStrings(lang:values:)``, made once per page by the caller) as `s`.
    func hostedPage(
        _ name: String, lang: String, title: String, values: [String: Any], strings: [String: String], branding: [String: Any]
    ) -> String {
        var all = values
        all["s"] = strings
        all["lang"] = lang
        for (key, value) in branding { all[key] = value }
        let body = (templates["\(lang)/page.\(name)"] ?? templates["\(Self.fallbackLanguage)/page.\(name)"])?.render(all) ?? ""
        all["title"] = title
        all["body"] = body
        let layout = templates["\(lang)/page.hosted_layout"] ?? templates["\(Self.fallbackLanguage)/page.hosted_layout"]
        return layout?.render(all) ?? body
    }

    /// A whole hosted document with no layout (the form_post answer).
    func hostedDocument(_ name: String, lang: String, values: [String: Any], texts: [String: String]) -> String {
        var all = values
        all["s"] = hostedStrings(lang: lang, values: texts)
        all["lang"] = lang
        return (templates["\(lang)/page.\(name)"] ?? templates["\(Self.fallbackLanguage)/page.\(name)"])?.render(all) ?? ""
    }

    /// Every string of `lang` (English for a key it lacks), rendered with `values`, each once.
    func hostedStrings(lang: String, values: [String: String]) -> [String: String] {
        let own = lang == Self.fallbackLanguage ? [:] : textStrings[lang] ?? [:]
        var out: [String: String] = [:]
        for (key, fallback) in textStrings[Self.fallbackLanguage] ?? [:] { out[key] = (own[key] ?? fallback).render(values) }
        for (key, template) in own where out[key] == nil { out[key] = template.render(values) }
        return out
    }

    /// A page string, itself a small template (it may name `{{email}}`).
    /// A field error in the page's language where the strings have its code (`error_<code>`), else
    /// the server's English message.
    func message(for error: FieldError, lang: String) -> String {
        let key = "error_\(error.code.rawValue)"
        guard strings[lang]?[key] != nil || strings[Self.fallbackLanguage]?[key] != nil else { return error.message }
        return string(key, lang: lang)
    }

    func string(_ key: String, lang: String, values: [String: String] = [:]) -> String {
        let raw = strings[lang]?[key] ?? strings[Self.fallbackLanguage]?[key] ?? key
        return (try? MustacheTemplate(string: raw).render(values)) ?? raw
    }
}

public enum TemplateError: Error, CustomStringConvertible {
    case missing(String)
    case invalid(String)

    public var description: String {
        switch self {
        case .missing(let name): "template \(name) is missing"
        case .invalid(let name): "template \(name) does not parse"
        }
    }
}
