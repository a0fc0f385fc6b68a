import GatehouseAPI
import GatehouseCore

/// What the factor page shows: the factors to choose from, or, while the user enrols their first, the
/// authenticator app's QR code (inline SVG, so the page needs no script and no image request) and its
/// secret for typing in by hand.
enum FactorPage {
    static func add(_ page: AuthorizeFlow.Page, strings: [String: String], to values: inout [String: Any]) {
        values["factors"] = page.factors.enumerated().map { index, factor -> [String: Any] in
            ["id": factor, "label": strings["factor_\(factor)"] ?? factor, "checked": index == 0]
        }
        guard page.enrol, let enrolment = page.enrolment else { return }
        values["enrol"] = true
        values["secret"] = grouped(enrolment.secret)
        if let code = try? QRCode(encoding: Array(enrolment.otpauthUri.utf8)) {
            values["qr_svg"] = code.svg(moduleSize: 4, quietZone: 4, title: strings["factor_enrol_qr"] ?? "QR code")
        }
    }

    /// The base32 secret in groups of four, as authenticator apps show it: easier to type and check.
    static func grouped(_ secret: String) -> String {
        var groups: [String] = []
        var rest = Substring(secret)
        while !rest.isEmpty {
            groups.append(String(rest.prefix(4)))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: " ")
    }
}
