import Foundation

/// OpenID Connect Front-Channel Logout 1.0: the URIs the logout page loads in hidden frames, one for
/// each app session the ended browser session had signed in whose client registered a
/// `frontchannel_logout_uri`, with `iss` and the session's `sid` (as its ID tokens carry it) so the
/// client can tell which of its sessions ended.
public enum FrontChannelLogout {
    public static func frames(for sessions: [SessionRecord], clients: ClientResolver, issuer: String) async -> [URL] {
        var frames: [URL] = []
        for session in sessions {
            // A client deleted meanwhile has nothing left to end.
            guard let client = try? await clients.resolve(session.clientID), let uri = client.settings.frontchannelLogoutURI,
                let frame = try? AuthorizationCodes.append([("iss", issuer), ("sid", session.id.uuidString.lowercased())], to: uri),
                !frames.contains(frame)
            else { continue }
            frames.append(frame)
        }
        return frames
    }
}
