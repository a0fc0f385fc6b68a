import Foundation

/// WebAuthn responses made by Yubico's python-fido2 and `cryptography` (`scripts/webauthn-authenticator.py`),
/// which `.ci/run` installs, so the server's passkey checks are never tested against responses of its
/// own making. One process per batch: key generation and imports cost some 200 ms a run.
public enum IndependentAuthenticator {
    /// One request to the script; see its docstring for each member.
    public struct Spec: Encodable, Sendable {
        public var command: String
        public var rpID: String?
        public var origin: String?
        public var challenge: String?
        public var alg: Int?
        public var fmt: String?
        public var root: Root?
        public var kind: String?
        public var uv: Bool?
        public var up: Bool?
        public var be: Bool?
        public var bs: Bool?
        public var signCount: UInt32?
        public var aaguid: String?
        public var credentialID: String?
        public var privateKeyPEM: String?
        public var userHandle: String?
        // Tampering: what a broken or hostile client would send.
        public var type: String?
        public var hashRPID: String?
        public var crossOrigin: Bool?
        public var leafOU: String?
        public var certAAGUID: String?
        public var nonce: String?

        enum CodingKeys: String, CodingKey {
            case command, origin, challenge, alg, fmt, root, kind, uv, up, be, bs, aaguid, type, nonce
            case rpID = "rp_id", signCount = "sign_count", credentialID = "credential_id", privateKeyPEM = "private_key_pem"
            case userHandle = "user_handle", hashRPID = "hash_rp_id", crossOrigin = "cross_origin", leafOU = "leaf_ou"
            case certAAGUID = "cert_aaguid"
        }

        public init(command: String) { self.command = command }

        /// A registration response for `challenge` (base64url).
        public static func create(
            rpID: String, origin: String, challenge: String, alg: Int = -7, fmt: String = "none", root: Root? = nil
        ) -> Spec {
            var spec = Spec(command: "create")
            spec.rpID = rpID
            spec.origin = origin
            spec.challenge = challenge
            spec.alg = alg
            spec.fmt = fmt
            spec.root = root
            return spec
        }

        /// An authentication response with `credential`'s key.
        public static func get(rpID: String, origin: String, challenge: String, credential: Credential, signCount: UInt32) -> Spec {
            var spec = Spec(command: "get")
            spec.rpID = rpID
            spec.origin = origin
            spec.challenge = challenge
            spec.alg = credential.alg
            spec.credentialID = credential.credentialID
            spec.privateKeyPEM = credential.privateKeyPEM
            spec.signCount = signCount
            return spec
        }
    }

    /// An attestation root the script made (or is given back to sign with).
    public struct Root: Codable, Sendable {
        public var certPEM: String
        public var keyPEM: String
        enum CodingKeys: String, CodingKey {
            case certPEM = "cert_pem", keyPEM = "key_pem"
        }
    }

    /// A registration the script made: the new credential's private key stays with the test.
    public struct Credential: Decodable, Sendable {
        public var credentialID: String
        public var privateKeyPEM: String
        public var alg: Int
        public var rootPEM: String?
        public var response: [String: String]
        enum CodingKeys: String, CodingKey {
            case credentialID = "credential_id", privateKeyPEM = "private_key_pem", alg, rootPEM = "root_pem", response
        }

        /// A response a test built by hand (one no authenticator library makes).
        public init(credentialID: String, privateKeyPEM: String, alg: Int, rootPEM: String?, response: [String: String]) {
            self.credentialID = credentialID
            self.privateKeyPEM = privateKeyPEM
            self.alg = alg
            self.rootPEM = rootPEM
            self.response = response
        }
    }

    public struct Assertion: Decodable, Sendable {
        public var response: [String: String?]
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/webauthn-authenticator.py")

    private static let interpreter: Task<String?, Never> = Task {
        (try? await Subprocess.standardOutput(
            "/usr/bin/env", ["python3", "-c", "import sys, fido2, cryptography; print(sys.executable)"])) ?? nil
    }

    /// Whether python-fido2 and cryptography answer; tests that need them say so visibly when they do not.
    public static func isAvailable() async -> Bool { await interpreter.value != nil }

    /// The script's answers to `specs`, in order, as raw JSON objects.
    public static func run(_ specs: [Spec]) async throws -> [Data] {
        guard let python = await interpreter.value else { throw Unavailable() }
        let input = String(decoding: try JSONEncoder().encode(specs), as: UTF8.self)
        guard let output = try await Subprocess.standardOutput(python, [script.path, input]),
            let list = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [Any]
        else { throw Unavailable() }
        return try list.map { try JSONSerialization.data(withJSONObject: $0) }
    }

    public static func root(kind: String = "p256") async throws -> Root {
        var spec = Spec(command: "root")
        spec.kind = kind
        return try JSONDecoder().decode(Root.self, from: try await run([spec])[0])
    }

    public static func create(_ specs: [Spec]) async throws -> [Credential] {
        try await run(specs).map { try JSONDecoder().decode(Credential.self, from: $0) }
    }

    public static func get(_ specs: [Spec]) async throws -> [Assertion] {
        try await run(specs).map { try JSONDecoder().decode(Assertion.self, from: $0) }
    }

    public struct Unavailable: Error {}
}
