import Foundation
import GatehouseAPI
import Testing

@testable import GatehouseCore

@Suite("Password screen rules")
struct PasswordScreenRulesTests {
    /// The list the server ships, read from the source tree.
    static let bundled: CommonPasswords = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/GatehouseServer/Resources/common-passwords.txt")
        return CommonPasswords(list: (try? String(contentsOf: file, encoding: .utf8)) ?? "")
    }()

    @Test(
        "PWS-1: the shipped list holds Django's 19,640 passwords; a listed password in any case, or one of four characters or more with digits and symbols added, is common; passphrases are not; email, its local part and the app's name are found inside a password, ignoring case and punctuation, from four characters on"
    )
    func localRules() async {
        let list = Self.bundled
        #expect(list.count == 19_640)
        for common in ["password", "PASSWORD", " qwertyuiop ", "iloveyou2024!", "Dragon#1", "football 99", "123456789"] {
            #expect(list.contains(common), "\(common)")
        }
        for fine in ["correct horse battery", "a quiet orchard at dawn", "vG7#kq29!pLm", "2024password", "abc123x", "abc!!"] {
            #expect(!list.contains(fine), "\(fine)")
        }
        let screen = PasswordScreen(policy: PasswordPolicy(), common: list)
        func code(_ password: String, email: String? = "ada.lovelace@example.com", app: String? = "Acme Notes") -> ErrorCode? {
            var result = ValidationResult()
            screen.localCheck(password, email: email, appName: app, into: &result)
            return result.errors.first?.code
        }
        #expect(code("short") == .tooShort)
        #expect(code("ada.lovelace@example.com") == .sameAsEmail)
        #expect(code("AdaLovelace1815") == .containsPersonalData)
        #expect(code("ada.lovelace@example.com!!") == .containsPersonalData)
        #expect(code("acme-notes 2024") == .containsPersonalData)
        #expect(code("password2024") == .commonPassword)
        #expect(code("a quiet orchard at dawn") == nil)
        // Parts under four characters are not looked for: "jo" would refuse every "major", "Acme" app aside.
        #expect(code("major journey plan", email: "jo@example.com", app: "Ox") == nil)
        #expect(code("acme notes ahead", app: nil) == nil)
    }

    @Test(
        "PWS-4: a range answer is matched on the 35-digit suffix in any case; padding counted 0 is not a match; a line that is not SUFFIX:COUNT makes the answer unusable"
    )
    func rangeAnswers() throws {
        let suffix: Substring = "1E4C9B93F3F0682250B6CF8331B7EE68FD8"
        let body =
            "0018A45C4D1DEF81644B54AB7F969B88D65:0\r\n1e4c9b93f3f0682250b6cf8331b7ee68fd8:3861493\r\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2"
        #expect(try PasswordRangeService.find(suffix, in: Data(body.utf8)) == .breached(count: 3_861_493))
        #expect(try PasswordRangeService.find(suffix, in: Data("1E4C9B93F3F0682250B6CF8331B7EE68FD8:0\n".utf8)) == .notFound)
        #expect(try PasswordRangeService.find(suffix, in: Data("00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2\n".utf8)) == .notFound)
        for bad in ["<html>busy</html>", "1E4C9B93F3F0682250B6CF8331B7EE68FD8", "XYZ:1", "1E4C9B93F3F0682250B6CF8331B7EE68FD8:many"] {
            #expect(throws: ProviderCallError.self) { try PasswordRangeService.find(suffix, in: Data(bad.utf8)) }
        }
    }
}
