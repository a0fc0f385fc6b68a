import Foundation
import GatehouseAPI

/// From the app into the web (Schibsted's `webSessionURL`): a signed-in app asks for a one-time,
/// short-lived URL; the browser that opens it is signed in as the app's user (a browser session, so
/// `/oauth/authorize` then needs no password) and lands where the app said.
public struct WebSessionFlow: Sendable {
    let services: CoreServices
    public static let lifetime: TimeInterval = 60

    public init(services: CoreServices) { self.services = services }

    struct Data: Codable {
        var target: String
        var amr: [String]
        var authTime: Date
    }

    /// `redirectTo`: a path on this server (`/…`, not `//…`), or an absolute URL that is one of the
    /// client's redirect URIs or lies under one of its allowed web origins. Nothing else: the URL
    /// must not make Gatehouse an open redirector.
    public func create(_ principal: Principal, redirectTo: String?, meta: RequestMeta) async throws -> WebSessionResponse {
        let client = try await services.clients.resolve(principal.session.clientID)
        // A third party's token must not become a browser session that signs in to the operator's own
        // sites without asking.
        guard !client.settings.thirdParty.isOn else {
            throw GatehouseError.forbidden("A third-party client cannot open web sessions.")
        }
        let target = try Self.target(redirectTo, client: client, publicURL: services.settings.publicURL)
        let token = Secrets.token(prefix: "gh_ws_")
        let now = services.clock.now()
        let session = principal.session
        let data = String(
            decoding: try JSONEncoder().encode(Data(target: target, amr: session.amr, authTime: session.authTime ?? session.createdAt)),
            as: UTF8.self)
        try await services.persistence.transaction { stores in
            try await stores.codes.insert(
                OneTimeCodeRecord(
                    purpose: .webSession, identifier: principal.user.id.uuidString.lowercased(), clientID: client.id,
                    userID: principal.user.id, codeHash: nil, tokenHash: Secrets.sha256Hex(token), maxAttempts: 1, data: data,
                    createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime)))
        }
        var components = URLComponents(string: services.settings.publicURL + "/web-session")
        components?.queryItems = [URLQueryItem(name: "token", value: token)]
        guard let url = components?.string else { throw GatehouseError.internalFailure() }
        return WebSessionResponse(url: url, expiresIn: Int(Self.lifetime))
    }

    /// The browser is signed in as someone else: the link does not switch it (a link from another
    /// person's app would otherwise sign the browser out and into that person's account).
    public struct OtherUser: Error {}

    /// Opens the URL once: the browser's session, and where to go.
    public func open(token: String, current: BrowserSessionRecord?, meta: RequestMeta) async throws -> (target: String, cookie: String?) {
        if let current, token.utf8.count <= 256,
            let record = try await services.persistence.read({ try await $0.codes.find(tokenHash: Secrets.sha256Hex(token)) }),
            record.purpose == .webSession, record.userID != current.userID
        {
            throw OtherUser()
        }
        let record = try await services.codes.redeem(token: token, purpose: .webSession)
        guard let userID = record.userID,
            let data = record.data.flatMap({ try? JSONDecoder().decode(Data.self, from: Foundation.Data($0.utf8)) })
        else { throw OneTimeCodes.expired }
        let starter = services.starter
        let client = try await services.clients.resolve(record.clientID)
        // The app session's sign-in stands in: its methods and time, so `max_age` and `auth_time` stay true.
        let authentication = Authentication(userID: userID, amr: data.amr, authTime: data.authTime)
        let start = try await services.persistence.transaction { stores in
            guard let user = try await stores.users.find(id: userID), user.state == .active else { throw GatehouseError.accountDisabled }
            return try await starter.start(
                authentication, client: client, target: .browser(.init(current: current)), meta: meta, stores: stores)
        }
        return (data.target, try start.get().browser().cookie)
    }

    static func target(_ raw: String?, client: ClientRecord, publicURL: String) throws -> String {
        guard let raw, !raw.isEmpty else { return publicURL + "/" }
        let invalid = GatehouseError.validation(
            field: "redirect_to", code: .invalidValue,
            message: "Use a path on this server, one of the client's redirect URIs, or a URL under one of its allowed origins.")
        guard raw.utf8.count <= 2048, !raw.contains("\\"), !raw.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else {
            throw invalid
        }
        if raw.hasPrefix("/") {
            guard !raw.hasPrefix("//"), URL(string: publicURL + raw) != nil, raw.allSatisfy(\.isASCII) else { throw invalid }
            return publicURL + raw
        }
        // Whatever passes must also be a URL the redirect can carry.
        guard URL(string: raw) != nil, raw.allSatisfy(\.isASCII) else { throw invalid }
        if client.redirectURIs.contains(raw) { return raw }
        guard let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http",
            components.user == nil, components.password == nil, let host = components.host, !host.isEmpty
        else { throw invalid }
        let origin = "\(scheme)://\(host.lowercased())" + (components.port.map { ":\($0)" } ?? "")
        guard client.settings.allowedOrigins.contains(origin) else { throw invalid }
        return raw
    }
}

extension OneTimeCodeRecord.Purpose {
    public static let webSession = OneTimeCodeRecord.Purpose(rawValue: "web_session")
}
