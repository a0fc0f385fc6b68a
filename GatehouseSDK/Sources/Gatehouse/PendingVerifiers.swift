import Foundation

/// The PKCE verifiers kept across a relaunch, the sign-up mail link's and the web sign-in's, each in
/// its own slot of the store's one pending-verifier item: starting a web sign-in never breaks a
/// verification link still in the mailbox, nor the other way round.
struct PendingVerifiers: Equatable {
    var signUp: String?
    var social: String?

    static let marker = "gh2;"

    /// A value without the marker was written for the sign-up alone (before web sign-in existed).
    init(stored: String?) {
        guard let stored else { return }
        guard stored.hasPrefix(Self.marker) else {
            signUp = stored
            return
        }
        // Verifiers are base64url: no `;` inside one.
        for part in stored.dropFirst(Self.marker.count).split(separator: ";") {
            if part.hasPrefix("s:") { signUp = String(part.dropFirst(2)) }
            if part.hasPrefix("w:") { social = String(part.dropFirst(2)) }
        }
    }

    /// The sign-up's alone keeps the old form, which an older SDK reading the same store understands.
    var stored: String? {
        guard social != nil else { return signUp }
        return Self.marker + [signUp.map { "s:" + $0 }, social.map { "w:" + $0 }].compactMap { $0 }.joined(separator: ";")
    }
}

extension AuthClient {
    func pendingVerifiers() async -> PendingVerifiers {
        PendingVerifiers(stored: try? await configuration.store.loadPendingVerifier())
    }

    /// Changes one slot and keeps the other.
    func updatePendingVerifiers(_ change: (inout PendingVerifiers) -> Void) async throws {
        var pending = await pendingVerifiers()
        change(&pending)
        try await configuration.store.savePendingVerifier(pending.stored)
    }
}
