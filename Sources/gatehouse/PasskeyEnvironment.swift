import ArgumentParser
import Foundation
import GatehouseCore

/// Passkey settings from the environment: `GATEHOUSE_PASSKEY_RP_ID`, `GATEHOUSE_PASSKEY_RP_NAME`,
/// `GATEHOUSE_PASSKEY_ORIGINS`, `GATEHOUSE_APPLE_APP_IDS`, `GATEHOUSE_ANDROID_APPS` and
/// `GATEHOUSE_PASSKEY_ATTESTATION_ROOTS`. Each is checked here, so a mistake stops the start with a
/// sentence rather than every passkey ceremony later.
enum PasskeyEnvironment {
    static func settings(publicURL: String) throws -> PasskeySettings {
        var settings = PasskeySettings()
        let host = URL(string: publicURL)?.host ?? ""
        if let rpID = Env.value(nil, "GATEHOUSE_PASSKEY_RP_ID") {
            // WebAuthn §5.1.4.1: the RP ID is the origin's host or a registrable suffix of it.
            guard rpID == host || host.hasSuffix("." + rpID), rpID.contains(".") || rpID == "localhost" else {
                throw ValidationError("GATEHOUSE_PASSKEY_RP_ID must be the public URL's host (\(host)) or a domain it is under")
            }
            settings.rpID = rpID
        }
        settings.rpName = Env.value(nil, "GATEHOUSE_PASSKEY_RP_NAME") ?? settings.rpName
        for origin in list("GATEHOUSE_PASSKEY_ORIGINS") {
            guard let url = URL(string: origin), ["https", "http"].contains(url.scheme ?? ""), url.host != nil, url.path.isEmpty,
                url.query == nil
            else { throw ValidationError("GATEHOUSE_PASSKEY_ORIGINS holds origins such as https://app.example.com, not \(origin)") }
            settings.origins.append(origin)
        }
        for app in list("GATEHOUSE_APPLE_APP_IDS") {
            guard app.split(separator: ".").count >= 3 else {
                throw ValidationError("GATEHOUSE_APPLE_APP_IDS holds TEAMID.bundle.id values, not \(app)")
            }
            settings.appleAppIDs.append(app)
        }
        // package=FINGERPRINT;FINGERPRINT,package=…: the fingerprints are SHA-256 with colons.
        for entry in list("GATEHOUSE_ANDROID_APPS") {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            let app = PasskeySettings.AndroidApp(
                packageName: parts[0], fingerprints: parts.count == 2 ? parts[1].split(separator: ";").map(String.init) : [])
            guard parts.count == 2, !app.fingerprints.isEmpty, app.fingerprintBytes != nil else {
                throw ValidationError("GATEHOUSE_ANDROID_APPS holds package=SHA256:FINGERPRINT;… entries, not \(entry)")
            }
            settings.androidApps.append(app)
        }
        if let path = Env.value(nil, "GATEHOUSE_PASSKEY_ATTESTATION_ROOTS") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8), let roots = try? AttestationRoots.certificates(pem: text)
            else { throw ValidationError("GATEHOUSE_PASSKEY_ATTESTATION_ROOTS: \(path) is not a readable PEM file of certificates") }
            guard !roots.isEmpty else { throw ValidationError("GATEHOUSE_PASSKEY_ATTESTATION_ROOTS: \(path) holds no certificate") }
            settings.attestationRoots.packed = roots
            settings.attestationRoots.apple += roots
            // Roots to check against mean the operator wants to know the authenticator.
            settings.attestation = "direct"
        }
        return settings
    }

    private static func list(_ variable: String) -> [String] {
        (Env.value(nil, variable) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
