import Foundation

/// DPoP proofs made by PyJWT and `cryptography` (`scripts/dpop-proof.py`), which `.ci/run` installs,
/// so the server's proof checks are never tested against proofs of its own making.
public enum IndependentDPoP {
    /// What one proof is for; `key` is a PEM file the script makes on first use.
    public struct Spec: Encodable, Sendable {
        public var key: String
        public var alg: String
        public var htm: String
        public var htu: String
        public var iat: Int?
        public var jti: String?
        public var token: String?
        public var nonce: String?
        public var typ: String?
        public var `private`: Bool?
        /// The key's type when it is not the one `alg` signs with: "ec", "rsa" or "ed25519".
        public var kind: String?
        /// Claims changed after signing: the signature does not hold.
        public var tamper: Bool?

        public init(
            key: String, alg: String = "ES256", htm: String, htu: String, iat: Int? = nil, jti: String? = nil, token: String? = nil,
            nonce: String? = nil, typ: String? = nil, private: Bool? = nil, kind: String? = nil,
            tamper: Bool? = nil
        ) {
            self.tamper = tamper
            self.kind = kind
            self.key = key
            self.alg = alg
            self.htm = htm
            self.htu = htu
            self.iat = iat
            self.jti = jti
            self.token = token
            self.nonce = nonce
            self.typ = typ
            self.private = `private`
        }
    }

    public struct Proof: Decodable, Sendable {
        public var proof: String
        /// The key's RFC 7638 thumbprint, computed by the script.
        public var jkt: String
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/dpop-proof.py")

    private static let interpreter: Task<String?, Never> = Task {
        (try? await Subprocess.standardOutput("/usr/bin/env", ["python3", "-c", "import sys, jwt, cryptography; print(sys.executable)"]))
            ?? nil
    }

    /// Whether PyJWT and cryptography answer; tests that need them say so visibly when they do not.
    public static func isAvailable() async -> Bool { await interpreter.value != nil }

    /// One proof per spec, in order, from one run of the script.
    public static func proofs(_ specs: [Spec]) async throws -> [Proof] {
        guard let python = await interpreter.value else { throw Unavailable() }
        let input = String(decoding: try JSONEncoder().encode(specs), as: UTF8.self)
        guard let output = try await Subprocess.standardOutput(python, [script.path, input]) else { throw Unavailable() }
        return try JSONDecoder().decode([Proof].self, from: Data(output.utf8))
    }

    public static func proof(_ spec: Spec) async throws -> Proof { try await proofs([spec])[0] }

    public struct Unavailable: Error {}
}
