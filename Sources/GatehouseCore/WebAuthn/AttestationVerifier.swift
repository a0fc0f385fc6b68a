import Crypto
import Foundation
import SwiftASN1
import X509

/// What an attestation statement established about a new credential.
public enum AttestationTrust: String, Sendable, Codable {
    /// `none`: the authenticator said nothing about itself (the common case for passkeys).
    case none
    /// `packed` self attestation: signed by the credential's own key, proving only possession.
    case selfAttested = "self"
    /// A certificate chain that verifies but leads to no configured root: the maker's claim, unchecked.
    case unverified
    /// A certificate chain that leads to a configured root.
    case verified
}

/// The roots attestation chains are checked against.
public struct AttestationRoots: Sendable {
    /// Roots for `packed` chains. Empty: a chain is accepted as ``AttestationTrust/unverified``.
    public var packed: [Certificate]
    /// Roots for `apple` chains: Apple's WebAuthn root by default. An `apple` statement that leads to
    /// none of them is refused, since its only claim is that Apple made the authenticator.
    public var apple: [Certificate]

    public init(packed: [Certificate] = [], apple: [Certificate] = AttestationRoots.appleWebAuthnRoot.map { [$0] } ?? []) {
        self.packed = packed
        self.apple = apple
    }

    /// Apple WebAuthn Root CA, as published at
    /// https://www.apple.com/certificateauthority/Apple_WebAuthn_Root_CA.pem (valid until 2045-03-15).
    public static let appleWebAuthnRoot: Certificate? = try? Certificate(
        pemEncoded: """
            -----BEGIN CERTIFICATE-----
            MIICEjCCAZmgAwIBAgIQaB0BbHo84wIlpQGUKEdXcTAKBggqhkjOPQQDAzBLMR8w
            HQYDVQQDDBZBcHBsZSBXZWJBdXRobiBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJ
            bmMuMRMwEQYDVQQIDApDYWxpZm9ybmlhMB4XDTIwMDMxODE4MjEzMloXDTQ1MDMx
            NTAwMDAwMFowSzEfMB0GA1UEAwwWQXBwbGUgV2ViQXV0aG4gUm9vdCBDQTETMBEG
            A1UECgwKQXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTB2MBAGByqGSM49
            AgEGBSuBBAAiA2IABCJCQ2pTVhzjl4Wo6IhHtMSAzO2cv+H9DQKev3//fG59G11k
            xu9eI0/7o6V5uShBpe1u6l6mS19S1FEh6yGljnZAJ+2GNP1mi/YK2kSXIuTHjxA/
            pcoRf7XkOtO4o1qlcaNCMEAwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUJtdk
            2cV4wlpn0afeaxLQG2PxxtcwDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2cA
            MGQCMFrZ+9DsJ1PW9hfNdBywZDsWDbWFp28it1d/5w2RPkRX3Bbn/UbDTNLx7Jr3
            jAGGiQIwHFj+dJZYUJR786osByBelJYsVZd2GbHQu209b5RCmGQ21gpSAk9QZW4B
            1bWeT0vT
            -----END CERTIFICATE-----
            """)
}

/// Checks an attestation statement in the formats Gatehouse accepts: `none`, `packed` (self and with
/// a certificate chain) and `apple` (WebAuthn §8.2, §8.7, §8.8).
public enum AttestationVerifier {
    /// A chain longer than this is no authenticator's.
    static let maximumChainLength = 5

    public static func verify(
        _ object: AttestationObject, clientDataHash: [UInt8], roots: AttestationRoots
    ) async throws(WebAuthnError) -> AttestationTrust {
        guard let credential = object.authenticatorData.attestedCredential else {
            throw .malformed("the authenticator data carries no attested credential")
        }
        let signed = object.authenticatorData.raw + clientDataHash
        let statement = object.statement
        switch object.format {
        case "none":
            guard statement.mapEntries?.isEmpty == true else { throw .attestation("a none statement must be empty") }
            return .none
        case "packed":
            return try await packed(statement, signed: signed, credential: credential, roots: roots.packed)
        case "apple":
            return try await apple(statement, signed: signed, credential: credential, roots: roots.apple)
        default:
            throw .attestation("format \(object.format) is not accepted (none, packed, apple)")
        }
    }

    private static func packed(
        _ statement: CBORValue, signed: [UInt8], credential: AuthenticatorData.AttestedCredential, roots: [Certificate]
    ) async throws(WebAuthnError) -> AttestationTrust {
        guard let alg = statement[text: "alg"]?.int, let signature = statement[text: "sig"]?.bytes else {
            throw .attestation("a packed statement needs alg and sig")
        }
        let allowed: Set<String> = ["alg", "sig", "x5c"]
        guard statement.mapEntries?.allSatisfy({ $0.key.text.map(allowed.contains) == true }) == true else {
            throw .attestation("a packed statement has members other than alg, sig and x5c")
        }
        guard let x5c = statement[text: "x5c"] else {
            // Self attestation: the credential's own key signs, with the algorithm it is.
            guard alg == credential.publicKey.algorithm.rawValue else {
                throw .attestation("a self attestation's alg differs from the credential key's")
            }
            guard credential.publicKey.isValidSignature(signature, for: signed) else { throw .badSignature }
            return .selfAttested
        }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        guard leaf.publicKey.isValidSignature(signature, for: signed, signatureAlgorithm: try signatureAlgorithm(alg)) else {
            throw .attestation("the statement's signature does not verify with its certificate")
        }
        try checkPackedLeaf(leaf, aaguid: credential.aaguid)
        if roots.isEmpty { return .unverified }
        try await requireChain(chain, roots: roots)
        return .verified
    }

    private static func apple(
        _ statement: CBORValue, signed: [UInt8], credential: AuthenticatorData.AttestedCredential, roots: [Certificate]
    ) async throws(WebAuthnError) -> AttestationTrust {
        guard statement.mapEntries?.count == 1, let x5c = statement[text: "x5c"] else {
            throw .attestation("an apple statement holds x5c and nothing else")
        }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        // §8.8: the nonce is SHA-256(authenticatorData ‖ clientDataHash), in the certificate's
        // extension 1.2.840.113635.100.8.2 as SEQUENCE { [1] EXPLICIT OCTET STRING }. DER has one
        // encoding, so the whole value is compared byte for byte.
        let nonce = Array(SHA256.hash(data: signed))
        let expected: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce
        guard let ext = leaf.extensions[oid: [1, 2, 840, 113635, 100, 8, 2]], Array(ext.value) == expected else {
            throw .attestation("the certificate's nonce is not this registration's")
        }
        guard let key = credential.publicKey.certificateKey, key == leaf.publicKey else {
            throw .attestation("the certificate's key is not the credential's")
        }
        guard !roots.isEmpty else { throw .attestation("no Apple root is configured") }
        try await requireChain(chain, roots: roots)
        return .verified
    }

    private static func certificates(_ value: CBORValue) throws(WebAuthnError) -> [Certificate] {
        guard let items = value.array, !items.isEmpty, items.count <= maximumChainLength else {
            throw .attestation("x5c must hold 1 to \(maximumChainLength) certificates")
        }
        var chain: [Certificate] = []
        for item in items {
            guard let der = item.bytes, let certificate = try? Certificate(derEncoded: der) else {
                throw .attestation("an x5c entry is not a DER certificate")
            }
            chain.append(certificate)
        }
        return chain
    }

    private static func signatureAlgorithm(_ alg: Int) throws(WebAuthnError) -> Certificate.SignatureAlgorithm {
        switch COSEAlgorithm(rawValue: alg) {
        case .es256: .ecdsaWithSHA256
        case .rs256: .sha256WithRSAEncryption
        case .eddsa: .ed25519
        default: throw .unsupportedAlgorithm(alg)
        }
    }

    /// §8.2.1's requirements on a packed attestation certificate.
    private static func checkPackedLeaf(_ leaf: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard leaf.version == .v3 else { throw .attestation("the attestation certificate is not X.509 version 3") }
        var found: [ASN1ObjectIdentifier: String] = [:]
        for rdn in leaf.subject {
            for attribute in rdn { found[attribute.type] = String(attribute.value) }
        }
        let needed: [ASN1ObjectIdentifier] = [
            .RDNAttributeType.countryName, .RDNAttributeType.organizationName, .RDNAttributeType.organizationalUnitName,
            .RDNAttributeType.commonName,
        ]
        guard needed.allSatisfy({ found[$0]?.isEmpty == false }) else {
            throw .attestation("the attestation certificate's subject lacks C, O, OU or CN")
        }
        guard found[.RDNAttributeType.organizationalUnitName] == "Authenticator Attestation" else {
            throw .attestation("the attestation certificate's OU is not \"Authenticator Attestation\"")
        }
        if case .isCertificateAuthority = try? leaf.extensions.basicConstraints {
            throw .attestation("the attestation certificate is a CA")
        }
        // id-fido-gen-ce-aaguid: when present, an OCTET STRING of the AAGUID, and not critical.
        if let ext = leaf.extensions[oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]] {
            guard !ext.critical, Array(ext.value) == [0x04, 0x10] + aaguid else {
                throw .attestation("the attestation certificate's AAGUID is not the authenticator's")
            }
        }
    }

    /// The chain must lead to one of `roots` and be valid now (RFC 5280 path validation).
    private static func requireChain(_ chain: [Certificate], roots: [Certificate]) async throws(WebAuthnError) {
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy() }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(chain.dropFirst()))
        guard case .validCertificate = result else {
            throw .attestation("the certificate chain leads to no trusted root")
        }
    }
}

extension AttestationRoots {
    /// Every certificate of a PEM bundle, as an operator's roots file holds them.
    public static func certificates(pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).map { try Certificate(pemDocument: $0) }
    }
}
