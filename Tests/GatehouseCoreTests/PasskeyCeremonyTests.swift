import Crypto
import Foundation
import GatehouseCore
import GatehouseTesting
import Testing
import X509

/// The relying party's checks against responses made by python-fido2 and `cryptography`
/// (`IndependentAuthenticator`), never by Gatehouse itself.
@Suite("Passkey ceremonies against an independent authenticator")
struct PasskeyCeremonyTests {
    static let rpID = "login.example.test"
    static let origin = "https://login.example.test"

    static func party(packed: [Certificate] = [], apple: [Certificate]? = nil) -> RelyingParty {
        RelyingParty(
            id: rpID, name: "Example", origins: [origin, "android:apk-key-hash:dGVzdA"],
            attestationRoots: apple.map { AttestationRoots(packed: packed, apple: $0) } ?? AttestationRoots(packed: packed))
    }

    static func challenge() -> [UInt8] { Secrets.randomBytes(32) }

    static func registration(_ credential: IndependentAuthenticator.Credential) -> PasskeyCeremony.Registration {
        PasskeyCeremony.Registration(
            credentialID: Base64URL.decode(credential.credentialID)!,
            clientDataJSON: Base64URL.decode(credential.response["clientDataJSON"]!)!,
            attestationObject: Base64URL.decode(credential.response["attestationObject"]!)!)
    }

    static func assertion(_ made: IndependentAuthenticator.Assertion, credentialID: String) -> PasskeyCeremony.Assertion {
        PasskeyCeremony.Assertion(
            credentialID: Base64URL.decode(credentialID)!,
            clientDataJSON: Base64URL.decode(made.response["clientDataJSON"]!!)!,
            authenticatorData: Base64URL.decode(made.response["authenticatorData"]!!)!,
            signature: Base64URL.decode(made.response["signature"]!!)!, userHandle: nil)
    }

    static func certificate(_ pem: String) throws -> Certificate { try AttestationRoots.certificates(pem: pem)[0] }

    @Test(
        "PK-1: every attestation format (none, packed self, packed with a chain, apple) and algorithm (ES256, RS256, EdDSA) from python-fido2 registers; each key then signs in, its counter moving forward; a chain is verified only against a configured root, an apple chain only against Apple's or a configured root"
    )
    func everyFormatAndAlgorithm() async throws {
        guard await IndependentAuthenticator.isAvailable() else {
            print("PK-1 skipped: python-fido2 and cryptography are not installed (pip install fido2 cryptography)")
            return
        }
        let root = try await IndependentAuthenticator.root()
        let rootCertificate = try Self.certificate(root.certPEM)
        var cases: [(fmt: String, alg: Int, challenge: [UInt8])] = []
        for fmt in ["none", "packed-self", "packed"] {
            for alg in [-7, -257, -8] { cases.append((fmt, alg, Self.challenge())) }
        }
        cases.append(("apple", -7, Self.challenge()))
        let made = try await IndependentAuthenticator.create(
            cases.map {
                .create(
                    rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode($0.challenge), alg: $0.alg, fmt: $0.fmt,
                    root: ["packed", "apple"].contains($0.fmt) ? root : nil)
            })
        let trusting = Self.party(packed: [rootCertificate], apple: [rootCertificate])
        var registered: [(IndependentAuthenticator.Credential, PasskeyCeremony.NewCredential)] = []
        for (index, credential) in made.enumerated() {
            let expectation = PasskeyCeremony.Expectation(challenge: cases[index].challenge, userVerification: .required)
            let verified = try await PasskeyCeremony.verify(
                Self.registration(credential), expecting: expectation, relyingParty: trusting)
            #expect(verified.publicKey.algorithm.rawValue == cases[index].alg)
            #expect(verified.credentialID == Base64URL.decode(credential.credentialID))
            #expect(verified.userVerified)
            let expectedTrust: AttestationTrust =
                switch cases[index].fmt {
                case "none": .none
                case "packed-self": .selfAttested
                default: .verified
                }
            #expect(verified.trust == expectedTrust, "\(cases[index])")
            #expect(verified.format == (cases[index].fmt == "apple" ? "apple" : cases[index].fmt == "none" ? "none" : "packed"))
            registered.append((credential, verified))

            if cases[index].fmt == "packed" {
                // Without a configured root the same chain is the maker's unchecked word.
                let unverified = try await PasskeyCeremony.verify(
                    Self.registration(credential), expecting: expectation, relyingParty: Self.party())
                #expect(unverified.trust == .unverified)
                // With another root configured it is refused.
                let other = try Self.certificate(try await IndependentAuthenticator.root().certPEM)
                await #expect(throws: WebAuthnError.attestation("the certificate chain leads to no trusted root")) {
                    try await PasskeyCeremony.verify(
                        Self.registration(credential), expecting: expectation, relyingParty: Self.party(packed: [other]))
                }
            }
            if cases[index].fmt == "apple" {
                // Apple's real root did not sign the test chain.
                await #expect(throws: WebAuthnError.attestation("the certificate chain leads to no trusted root")) {
                    try await PasskeyCeremony.verify(Self.registration(credential), expecting: expectation, relyingParty: Self.party())
                }
            }
        }

        // Each key signs in twice, its counter moving forward each time.
        let challenges = registered.map { _ in (Self.challenge(), Self.challenge()) }
        var specs: [IndependentAuthenticator.Spec] = []
        for (index, (credential, _)) in registered.enumerated() {
            specs.append(
                .get(
                    rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(challenges[index].0), credential: credential,
                    signCount: 1))
            specs.append(
                .get(
                    rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(challenges[index].1), credential: credential,
                    signCount: 7))
        }
        let assertions = try await IndependentAuthenticator.get(specs)
        for (index, (credential, verified)) in registered.enumerated() {
            var stored = PasskeyCeremony.StoredCredential(
                credentialID: verified.credentialID, publicKey: verified.publicKey, signCount: verified.signCount,
                backupEligible: verified.backupEligible)
            let first = try PasskeyCeremony.verify(
                Self.assertion(assertions[2 * index], credentialID: credential.credentialID),
                expecting: .init(challenge: challenges[index].0, userVerification: .required), credential: stored,
                relyingParty: Self.party())
            #expect(first.signCount == 1 && first.userVerified)
            stored.signCount = first.signCount
            let second = try PasskeyCeremony.verify(
                Self.assertion(assertions[2 * index + 1], credentialID: credential.credentialID),
                expecting: .init(challenge: challenges[index].1, userVerification: .required), credential: stored,
                relyingParty: Self.party())
            #expect(second.signCount == 7)
        }
    }

    @Test(
        "PK-2: refused, by name: a wrong origin, another RP ID's hash, the other ceremony's type, a foreign challenge, a cross-origin frame, no user presence, no user verification where required (accepted where preferred), a bad signature, a counter gone backwards, truncated or over-long CBOR, an unknown COSE algorithm, a packed certificate without the attestation OU or with another AAGUID, an apple nonce of another registration"
    )
    func refusals() async throws {
        guard await IndependentAuthenticator.isAvailable() else {
            print("PK-2 skipped: python-fido2 and cryptography are not installed (pip install fido2 cryptography)")
            return
        }
        let root = try await IndependentAuthenticator.root()
        let rootCertificate = try Self.certificate(root.certPEM)
        let trusting = Self.party(packed: [rootCertificate], apple: [rootCertificate])
        let challenge = Self.challenge()
        let encoded = Base64URL.encode(challenge)
        func spec(_ change: (inout IndependentAuthenticator.Spec) -> Void) -> IndependentAuthenticator.Spec {
            var spec = IndependentAuthenticator.Spec.create(rpID: Self.rpID, origin: Self.origin, challenge: encoded, root: root)
            change(&spec)
            return spec
        }
        let specs: [(String, IndependentAuthenticator.Spec, WebAuthnError)] = [
            ("origin", spec { $0.origin = "https://evil.example.test" }, .refused("origin https://evil.example.test is not allowed")),
            ("rp id", spec { $0.hashRPID = "example.test" }, .refused("the authenticator data is for another RP ID")),
            ("type", spec { $0.type = "webauthn.get" }, .refused("clientDataJSON's type is not webauthn.create")),
            (
                "challenge", spec { $0.challenge = Base64URL.encode(Self.challenge()) },
                .refused("clientDataJSON's challenge is not the one issued")
            ),
            ("cross origin", spec { $0.crossOrigin = true }, .refused("a cross-origin ceremony is not accepted")),
            ("presence", spec { $0.up = false }, .refused("the user was not present")),
            ("verification", spec { $0.uv = false }, .refused("the user was not verified")),
            (
                "OU",
                spec {
                    $0.fmt = "packed"; $0.leafOU = "Marketing"
                },
                .attestation("the attestation certificate's OU is not \"Authenticator Attestation\"")
            ),
            (
                "AAGUID",
                spec {
                    $0.fmt = "packed"; $0.certAAGUID = String(repeating: "ab", count: 16)
                },
                .attestation("the attestation certificate's AAGUID is not the authenticator's")
            ),
            (
                "nonce",
                spec {
                    $0.fmt = "apple"; $0.nonce = String(repeating: "00", count: 32)
                },
                .attestation("the certificate's nonce is not this registration's")
            ),
            (
                "backup",
                spec {
                    $0.bs = true; $0.be = false
                }, .malformed("the backed-up flag is set without backup eligibility")
            ),
        ]
        let made = try await IndependentAuthenticator.create(specs.map(\.1))
        let expectation = PasskeyCeremony.Expectation(challenge: challenge, userVerification: .required)
        for (index, (name, _, error)) in specs.enumerated() {
            await #expect(throws: error, "\(name)") {
                try await PasskeyCeremony.verify(Self.registration(made[index]), expecting: expectation, relyingParty: trusting)
            }
        }
        // Without user verification where it is only preferred, the same response registers.
        let unverified = try await PasskeyCeremony.verify(
            Self.registration(made[6]), expecting: .init(challenge: challenge, userVerification: .preferred), relyingParty: trusting)
        #expect(!unverified.userVerified)

        // Truncated, over-long, and a credential id that is not the authenticator data's.
        var good = Self.registration(try await IndependentAuthenticator.create([spec { _ in }])[0])
        var truncated = good
        truncated.attestationObject.removeLast(5)
        await #expect(throws: WebAuthnError.cbor(.truncated)) {
            try await PasskeyCeremony.verify(truncated, expecting: expectation, relyingParty: trusting)
        }
        var longer = good
        longer.attestationObject += [0x00]
        await #expect(throws: WebAuthnError.cbor(.trailingBytes(1))) {
            try await PasskeyCeremony.verify(longer, expecting: expectation, relyingParty: trusting)
        }
        good.credentialID[0] ^= 0xff
        await #expect(throws: WebAuthnError.refused("the credential id differs from the one in the authenticator data")) {
            try await PasskeyCeremony.verify(good, expecting: expectation, relyingParty: trusting)
        }

        // Sign-ins: a bad signature, a counter gone backwards, another key's signature, the wrong type.
        let credential = try await IndependentAuthenticator.create([
            .create(rpID: Self.rpID, origin: Self.origin, challenge: encoded)
        ])[0]
        let newCredential = try await PasskeyCeremony.verify(
            Self.registration(credential), expecting: expectation, relyingParty: trusting)
        let stored = PasskeyCeremony.StoredCredential(
            credentialID: newCredential.credentialID, publicKey: newCredential.publicKey, signCount: 10, backupEligible: false)
        let signChallenge = Self.challenge()
        var getSpecs: [IndependentAuthenticator.Spec] = [
            .get(rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(signChallenge), credential: credential, signCount: 11),
            .get(rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(signChallenge), credential: credential, signCount: 10),
            .get(rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(signChallenge), credential: credential, signCount: 11),
            .get(rpID: Self.rpID, origin: Self.origin, challenge: Base64URL.encode(signChallenge), credential: credential, signCount: 11),
        ]
        getSpecs[2].type = "webauthn.create"
        getSpecs[3].uv = false
        let gets = try await IndependentAuthenticator.get(getSpecs)
        let signExpectation = PasskeyCeremony.Expectation(challenge: signChallenge, userVerification: .required)
        var tampered = Self.assertion(gets[0], credentialID: credential.credentialID)
        tampered.signature[tampered.signature.count - 3] ^= 0x01
        #expect(throws: WebAuthnError.badSignature) {
            try PasskeyCeremony.verify(tampered, expecting: signExpectation, credential: stored, relyingParty: trusting)
        }
        var flipped = Self.assertion(gets[0], credentialID: credential.credentialID)
        flipped.authenticatorData[36] ^= 0x01  // the counter's last byte: the signature no longer covers it
        #expect(throws: WebAuthnError.badSignature) {
            try PasskeyCeremony.verify(flipped, expecting: signExpectation, credential: stored, relyingParty: trusting)
        }
        #expect(throws: WebAuthnError.counterWentBackwards) {
            try PasskeyCeremony.verify(
                Self.assertion(gets[1], credentialID: credential.credentialID), expecting: signExpectation, credential: stored,
                relyingParty: trusting)
        }
        #expect(throws: WebAuthnError.refused("clientDataJSON's type is not webauthn.get")) {
            try PasskeyCeremony.verify(
                Self.assertion(gets[2], credentialID: credential.credentialID), expecting: signExpectation, credential: stored,
                relyingParty: trusting)
        }
        #expect(throws: WebAuthnError.refused("the user was not verified")) {
            try PasskeyCeremony.verify(
                Self.assertion(gets[3], credentialID: credential.credentialID), expecting: signExpectation, credential: stored,
                relyingParty: trusting)
        }
        let accepted = try PasskeyCeremony.verify(
            Self.assertion(gets[0], credentialID: credential.credentialID), expecting: signExpectation, credential: stored,
            relyingParty: trusting)
        #expect(accepted.signCount == 11)

        // An algorithm outside the three (ES384, -35) and a key whose type does not fit its algorithm.
        let es384: CBORValue = .map([
            .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .negative(34)),
            .init(key: .negative(0), value: .unsigned(2)),
        ])
        #expect(throws: WebAuthnError.unsupportedAlgorithm(-35)) { try COSEKey(es384) }
        let mismatched: CBORValue = .map([
            .init(key: .unsigned(1), value: .unsigned(1)), .init(key: .unsigned(3), value: .negative(6)),
        ])
        #expect(throws: WebAuthnError.malformed("the credential key's kty does not fit its alg")) { try COSEKey(mismatched) }
    }
}
