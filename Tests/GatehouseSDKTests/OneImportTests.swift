// Only `Gatehouse` (and the test framework): this file stops compiling if the wire types are no
// longer re-exported.
import Gatehouse
import Testing

@Suite("One import")
struct OneImportTests {
    @Test("import Gatehouse is enough to name the wire types an app uses")
    func wireTypesComeAlong() throws {
        let profile = Profile(name: "Ada")
        let code: ErrorCode = .invalidCredentials
        let sent = MailSentResponse(resendAfter: 60)
        let user: User? = nil
        #expect(profile.name == "Ada" && code.rawValue == "invalid_credentials" && sent.resendAfter == 60 && user == nil)
    }
}
