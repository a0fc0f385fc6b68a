import Foundation
import Gatehouse
import Testing

@Suite("Error codes")
struct ErrorCodeListTests {
    @Test("U-19: the shared list has no duplicates, none of the SDK's own codes, and not the code the server never sent")
    func list() {
        let codes = ErrorCode.serverCodes
        #expect(Set(codes).count == codes.count)
        for local in [GatehouseError.networkError, GatehouseError.invalidResponse, GatehouseError.notSignedIn] {
            #expect(!codes.contains(local))
        }
        #expect(!codes.contains("current_password_required"))
    }

    @Test("U-20: the predicates answer from the shared constants, whatever spelling arrives on the wire")
    func predicates() throws {
        func error(_ wire: String) throws -> GatehouseError {
            let code = try WireCoding.decoder().decode(ErrorCode.self, from: Data("\"\(wire)\"".utf8))
            return GatehouseError(code: code, status: 400, message: "")
        }
        #expect(try error("invalid_grant").isSessionEnded)
        #expect(try error("session_revoked").isSessionEnded)
        #expect(try !error("invalid_credentials").isSessionEnded)
        #expect(try error("invalid_credentials").isInvalidCredentials)
        #expect(try error("code_expired").isInvalidCode)
        #expect(try error("already_registered").isAlreadyRegistered)
        #expect(try error("email_not_verified").isEmailNotVerified)
        #expect(try error("device_deregistered").isDeviceDeregistered)
        #expect(try error("a_code_from_a_newer_server").code.rawValue == "a_code_from_a_newer_server")
    }
}
