import Foundation
import GatehouseAPI

/// WebAuthn's JSON responses (base64url members) turned into the bytes the ceremony checks, with a
/// field error for each member that is missing, not base64url or larger than any real one.
enum PasskeyWire {
    static func registration(_ credential: RegistrationCredential) throws -> PasskeyCeremony.Registration {
        var problems = ValidationResult()
        let id = credentialID(credential.id, rawID: credential.rawId, type: credential.type, problems: &problems)
        let clientData = bytes(
            credential.response.clientDataJSON, field: "credential.response.clientDataJSON", limit: CollectedClientData.maximumLength,
            problems: &problems)
        let attestation = bytes(
            credential.response.attestationObject, field: "credential.response.attestationObject",
            limit: AttestationObject.maximumLength, problems: &problems)
        guard problems.isValid, let id, let clientData, let attestation else { throw GatehouseError.validation(problems) }
        return PasskeyCeremony.Registration(credentialID: id, clientDataJSON: clientData, attestationObject: attestation)
    }

    static func assertion(_ credential: AuthenticationCredential) throws -> PasskeyCeremony.Assertion {
        var problems = ValidationResult()
        let id = credentialID(credential.id, rawID: credential.rawId, type: credential.type, problems: &problems)
        let response = credential.response
        let clientData = bytes(
            response.clientDataJSON, field: "credential.response.clientDataJSON", limit: CollectedClientData.maximumLength,
            problems: &problems)
        // 37 bytes and the extensions an authenticator may add: a few hundred at most.
        let authenticatorData = bytes(
            response.authenticatorData, field: "credential.response.authenticatorData", limit: 4096, problems: &problems)
        // An RSA-8192 signature is 1,024 bytes, the largest the three algorithms make.
        let signature = bytes(response.signature, field: "credential.response.signature", limit: 1024, problems: &problems)
        var userHandle: [UInt8]?
        if let handle = response.userHandle, !handle.isEmpty {
            // WebAuthn caps user handles at 64 bytes.
            userHandle = bytes(handle, field: "credential.response.userHandle", limit: 64, problems: &problems)
        }
        guard problems.isValid, let id, let clientData, let authenticatorData, let signature else {
            throw GatehouseError.validation(problems)
        }
        return PasskeyCeremony.Assertion(
            credentialID: id, clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature,
            userHandle: userHandle)
    }

    private static func credentialID(_ id: String, rawID: String, type: String, problems: inout ValidationResult) -> [UInt8]? {
        guard type == "public-key" else {
            problems.invalidate(field: "credential.type", code: .invalidValue, message: "A passkey's type is public-key.")
            return nil
        }
        guard id == rawID else {
            problems.invalidate(field: "credential.rawId", code: .invalidValue, message: "id and rawId must be the same base64url.")
            return nil
        }
        return bytes(id, field: "credential.id", limit: AuthenticatorData.maximumCredentialIDLength, problems: &problems)
    }

    private static func bytes(_ text: String, field: String, limit: Int, problems: inout ValidationResult) -> [UInt8]? {
        // Base64url of `limit` bytes is 4/3 as long; anything longer is refused before decoding.
        guard !text.isEmpty, text.utf8.count <= (limit * 4 + 2) / 3, let bytes = Base64URL.decode(text), !bytes.isEmpty,
            bytes.count <= limit
        else {
            problems.invalidate(field: field, code: .invalidFormat, message: "Send unpadded base64url of at most \(limit) bytes.")
            return nil
        }
        return bytes
    }
}
