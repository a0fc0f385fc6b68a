import Foundation
import GatehouseAPI
import Testing

@testable import GatehouseCore

@Suite("Usernames")
struct UsernameTests {
    @Test(
        "USR-1: usernames are compared as PRECIS UsernameCaseMapped compares them: full-width, case and compatibility forms fold to one name (Ａda, ADA, ａｄａ are ada; ß folds to ss; the ﬁ ligature to fi); shape, length and the reserved list are refused with field errors, in any width or case"
    )
    func normalizeAndValidate() {
        for same in ["Ａda", "ADA", "ａｄａ", " ada ", "Ada"] { #expect(Username.normalize(same) == "ada", "\(same)") }
        #expect(Username.normalize("Straße") == "strasse")
        #expect(Username.normalize("ﬁsher") == "fisher")
        #expect(Username.normalize("Zoë") == Username.normalize("ZOË"))
        func code(_ raw: String) -> ErrorCode? {
            var result = ValidationResult()
            _ = Username.validate(raw, into: &result)
            return result.errors.first?.code
        }
        for fine in ["ada", "ada.lovelace", "ada_1815", "björk", "名前です", "x-9"] { #expect(code(fine) == nil, "\(fine)") }
        #expect(code("") == .required)
        #expect(code("ab") == .tooShort)
        #expect(code(String(repeating: "a", count: 33)) == .tooLong)
        for bad in ["ada@example.com", "+4712345678", ".ada", "ada lovelace", "ada!", "<script>"] {
            #expect(code(bad) == .invalidFormat, "\(bad)")
        }
        for reserved in ["admin", "ADMIN", "Ａｄｍｉｎ", "Support", "root"] { #expect(code(reserved) == .invalidValue, "\(reserved)") }
    }
}
