import Foundation
import GatehouseCore
import Mustache

/// The admin console's pages: Mustache templates bundled with the server (English: the console is for
/// operators, not end users), each rendered into the shared layout.
struct ConsoleTemplates: Sendable {
    let library: MustacheLibrary

    init() throws {
        guard let directory = Bundle.module.url(forResource: "console", withExtension: nil) else {
            throw TemplateError.missing("bundled console templates")
        }
        var templates: [String: MustacheTemplate] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".mustache") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            do {
                templates[String(file.dropLast(".mustache".count))] = try MustacheTemplate(string: text)
            } catch {
                throw TemplateError.invalid("console/\(file)")
            }
        }
        self.library = MustacheLibrary(templates: templates)
    }

    /// `page` rendered (values escaped by Mustache) and set into the layout.
    func render(
        _ page: String, title: String, operatorName: String?, csrf: String?, nav: String? = nil, notice: String? = nil,
        values: [String: Any]
    )
        -> String
    {
        var pageValues = values
        pageValues["csrf"] = csrf ?? ""
        let content = library.render(pageValues, withTemplate: page) ?? ""
        var layout: [String: Any] = ["title": title, "content": content, "csrf": csrf ?? ""]
        if let operatorName { layout["operator"] = operatorName }
        if let notice { layout["notice"] = notice }
        if let nav { layout["nav" + nav] = true }
        return library.render(layout, withTemplate: "layout") ?? ""
    }

    /// UTC, to the minute (`seconds` for the audit log, where order within a minute matters).
    static func time(_ date: Date?, seconds: Bool = false) -> String {
        guard let date else { return "—" }
        let style = Date.VerbatimFormatStyle(
            format:
                "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
            timeZone: TimeZone(identifier: "UTC")!, calendar: Calendar(identifier: .gregorian))
        let text = date.formatted(style)
        return seconds ? text : String(text.dropLast(3))
    }
}
