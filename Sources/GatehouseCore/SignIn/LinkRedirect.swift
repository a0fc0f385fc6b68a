import Foundation
import GatehouseAPI

/// Where a link opened in a browser sends it back into the app: the redirect with the authorization
/// code the sign-in issued, or, when the sign-in waits for a second factor, with the flow the app
/// completes (`POST /v1/mfa/verify` answers the code this redirect would have carried).
enum LinkRedirect {
    static func after(_ signIn: () async throws -> SignedIn, redirect: String) async throws -> URL {
        do {
            return try AuthorizationCodes.append(code: try await signIn().started.code(), to: redirect)
        } catch let error as GatehouseError where error.code == .mfaRequired {
            guard let pending = error.pendingFlow else { throw error }
            var fields = [
                ("error", ErrorCode.mfaRequired.rawValue), ("flow_id", pending.id.uuidString.lowercased()),
                ("factors", pending.factors.joined(separator: ",")),
            ]
            if pending.enrol { fields.append(("enrol", "true")) }
            return try AuthorizationCodes.append(fields, to: redirect)
        }
    }
}
