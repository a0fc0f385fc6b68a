import Crypto
import Foundation

/// A virtual user's passkey: a P-256 key made at set-up and registered with a `none` attestation, then
/// an assertion per sign-in, as a platform authenticator answers. Its counter stays 0, as synced
/// passkeys (iCloud Keychain, Google Password Manager) report it. The CBOR is written by hand here: the
/// bench depends on no server module, and these two fixed structures are a few bytes each.
struct BenchPasskey: Sendable {
    let key = P256.Signing.PrivateKey()
    let credentialID = [UInt8]((0..<16).map { _ in UInt8.random(in: 0...255) })
    var userHandle = ""
    /// The RP ID the options named, and the origin the server accepts (its public URL's).
    var rpID = ""
    var origin = ""

    /// `RegistrationResponseJSON` for the registration options' challenge.
    func registration(challenge: String) throws -> String {
        let point = key.publicKey.rawRepresentation  // x ‖ y
        // COSE_Key {1: 2, 3: -7, -1: 1, -2: x, -3: y}
        let cose: [UInt8] =
            [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point.prefix(32) + [0x22, 0x58, 0x20] + point.suffix(32)
        // UP, UV, AT; counter 0; AAGUID zero; the credential id; the key.
        let authData =
            Array(SHA256.hash(data: Array(rpID.utf8))) + [0x45, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
            + [0, UInt8(credentialID.count)] + credentialID + cose
        // {"fmt": "none", "attStmt": {}, "authData": h'…'}
        var object: [UInt8] = [0xa3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xa0]
        object += [0x68] + Array("authData".utf8) + [0x58, UInt8(authData.count)] + authData
        let id = Self.base64URL(credentialID)
        let response: [String: Any] = [
            "clientDataJSON": Self.base64URL(clientData("webauthn.create", challenge)), "attestationObject": Self.base64URL(object),
            "transports": ["internal"],
        ]
        return try Self.json(["id": id, "rawId": id, "type": "public-key", "response": response])
    }

    /// `AuthenticationResponseJSON` for a sign-in's challenge.
    func assertion(challenge: String) throws -> String {
        let authData = Array(SHA256.hash(data: Array(rpID.utf8))) + [0x05, 0, 0, 0, 0]
        let client = clientData("webauthn.get", challenge)
        let signature = try key.signature(for: authData + Array(SHA256.hash(data: client))).derRepresentation
        let id = Self.base64URL(credentialID)
        let response: [String: Any] = [
            "clientDataJSON": Self.base64URL(client), "authenticatorData": Self.base64URL(authData),
            "signature": Self.base64URL(signature), "userHandle": userHandle,
        ]
        return try Self.json(["id": id, "rawId": id, "type": "public-key", "response": response])
    }

    private func clientData(_ type: String, _ challenge: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
