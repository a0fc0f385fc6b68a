import GatehouseAPI
import GatehouseCore

/// What the factor page shows: the factors to choose from, or, while the user enrols their first, the
/// authenticator app's QR code (inline SVG, so the page needs no script and no image request) and its
/// secret for typing in by hand.
enum FactorPage {
    /// `sent`: the factor a code was just sent for (checked, and the page says where the code went).
    static func add(_ page: AuthorizeFlow.Page, strings: [String: String], sent: String?, to values: inout [String: Any]) {
        // A passkey has a form of its own (shown by the page's script); the code form offers the rest.
        let codeFactors = page.factors.filter { $0 != PasskeyFactor.factorID }
        let checked = sent.flatMap { codeFactors.contains($0) ? $0 : nil } ?? (page.enrol ? "totp" : codeFactors.first)
        values["factors"] = codeFactors.map { factor -> [String: Any] in
            ["id": factor, "label": strings["factor_\(factor)"] ?? factor, "checked": factor == checked]
        }
        values["has_code"] = !codeFactors.isEmpty
        // A choice to make: several factors, or, while enrolling, a code by mail or text beside the app.
        values["choose"] = codeFactors.count > 1
        values["send"] = page.factors.filter { $0 == "email_otp" || $0 == "sms_otp" }.map { factor -> [String: String] in
            ["id": factor, "label": strings["factor_send_\(factor)"] ?? factor]
        }
        if sent != nil { values["sent"] = strings["factor_code_sent"] }
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
