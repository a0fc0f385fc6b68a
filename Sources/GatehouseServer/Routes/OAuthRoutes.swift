import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `/oauth/*`: form bodies in, JSON and RFC 6749 errors out.
struct OAuthRoutes: Sendable {
    let clients: ClientResolver
    let refreshFlow: RefreshFlow
    let oauthFlows: OAuthFlows
    let codeExchange: CodeExchange
    let pushedRequests: PushedRequests
    let tokenExchange: TokenExchange
    let devices: DeviceAuthorizations

    init(services: CoreServices) {
        self.codeExchange = CodeExchange(services: services)
        self.pushedRequests = PushedRequests(services: services)
        self.tokenExchange = TokenExchange(services: services)
        self.devices = DeviceAuthorizations(services: services)
        self.clients = services.clients
        self.refreshFlow = RefreshFlow(services: services)
        self.oauthFlows = OAuthFlows(services: services)
    }

    @Sendable func token(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await RequestDecoding.form(from: request)
        guard let grantType = form["grant_type"], !grantType.isEmpty else {
            throw GatehouseError.badRequest("grant_type is required.")
        }
        switch grantType {
        case "refresh_token":
            guard let token = form["refresh_token"], !token.isEmpty else {
                throw GatehouseError.badRequest("refresh_token is required.")
            }
            let client = try await client(request, form, requireExplicit: false)
            return try Responses.json(
                try await refreshFlow.refresh(
                    token: token, client: client, scope: form["scope"], resource: form["resource"], meta: context.meta), noStore: true)
        case "authorization_code":
            guard let code = form["code"], !code.isEmpty else { throw GatehouseError.badRequest("code is required.") }
            let client = try await client(request, form, requireExplicit: false)
            let meta = context.meta
            return try Responses.json(
                try await codeExchange.exchange(
                    code: code, redirectURI: form["redirect_uri"], verifier: form["code_verifier"], client: client, meta: meta,
                    resource: form["resource"]),
                noStore: true)
        case "client_credentials":
            let credentials = try Self.credentials(request, form)
            let client = try await clients.authenticateConfidential(clientID: credentials.id, secret: credentials.secret)
            return try Responses.json(
                try await oauthFlows.clientCredentials(
                    client: client, scope: form["scope"], resource: form["resource"], meta: context.meta),
                noStore: true)
        case DeviceAuthorizations.grantType:
            guard let deviceCode = form["device_code"], !deviceCode.isEmpty else {
                throw GatehouseError.badRequest("device_code is required.")
            }
            let client = try await client(request, form, requireExplicit: false)
            return try Responses.json(try await devices.poll(deviceCode: deviceCode, client: client, meta: context.meta), noStore: true)
        case TokenExchange.grantType:
            let credentials = try Self.credentials(request, form)
            let client = try await clients.authenticate(clientID: credentials.id, secret: credentials.secret)
            guard let subject = form["subject_token"], !subject.isEmpty, let subjectType = form["subject_token_type"], !subjectType.isEmpty
            else { throw GatehouseError.badRequest("subject_token and subject_token_type are required.") }
            let exchange = TokenExchange.Request(
                subjectToken: subject, subjectTokenType: subjectType, audience: form["audience"] ?? form["resource"], scope: form["scope"],
                requestedTokenType: form["requested_token_type"])
            return try Responses.json(try await tokenExchange.exchange(exchange, client: client, meta: context.meta), noStore: true)
        default:
            throw GatehouseError.unsupportedGrantType("grant_type \(grantType) is not supported.")
        }
    }

    @Sendable func revoke(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await RequestDecoding.form(from: request)
        guard let token = form["token"], !token.isEmpty else { throw GatehouseError.badRequest("token is required.") }
        let client = try await client(request, form, requireExplicit: false)
        try await oauthFlows.revoke(token: token, client: client)
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    @Sendable func introspect(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await RequestDecoding.form(from: request)
        let credentials = try Self.credentials(request, form)
        _ = try await clients.authenticateConfidential(clientID: credentials.id, secret: credentials.secret)
        guard let token = form["token"], !token.isEmpty else { throw GatehouseError.badRequest("token is required.") }
        return try Responses.json(try await oauthFlows.introspect(token: token), noStore: true)
    }

    /// `POST /oauth/device_authorization` (RFC 8628 §3.1): the client as at the token endpoint (a
    /// public one names itself), and the scopes it asks for.
    @Sendable func deviceAuthorization(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await RequestDecoding.form(from: request)
        let client = try await client(request, form, requireExplicit: false)
        return try Responses.json(try await devices.start(client: client, scope: form["scope"]), noStore: true)
    }

    /// `POST /oauth/par` (RFC 9126): the client, authenticated as at the token endpoint (a public one
    /// names itself), pushes its authorization request and gets the `request_uri` to send the browser with.
    @Sendable func pushAuthorizationRequest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await RequestDecoding.form(from: request)
        let credentials = try Self.credentials(request, form)
        let client = try await clients.authenticate(clientID: credentials.id, secret: credentials.secret)
        let pushed = try await pushedRequests.push(form, client: client, meta: context.meta)
        return try Responses.json(pushed, status: .created, noStore: true)
    }

    /// The calling client: authenticated when it is confidential; a public client only names itself
    /// (or is the default one).
    private func client(_ request: Request, _ form: [String: String], requireExplicit: Bool) async throws -> ClientRecord {
        let credentials = try Self.credentials(request, form)
        guard let id = credentials.id ?? request.headers[HTTPField.Name("Gatehouse-Client")!] else {
            do {
                return try await clients.resolve(nil)
            } catch let error as GatehouseError where error.category == .unavailable {
                throw error
            } catch {
                throw GatehouseError.clientAuthenticationFailed("client_id is required.")
            }
        }
        return try await clients.authenticate(clientID: id, secret: credentials.secret)
    }

    /// `client_secret_basic` or `client_secret_post`, never both (RFC 6749 §2.3.1).
    static func credentials(_ request: Request, _ form: [String: String]) throws -> (id: String?, secret: String?) {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "basic",
                let decoded = Data(base64Encoded: String(parts[1])).flatMap({ String(data: $0, encoding: .utf8) }),
                let colon = decoded.firstIndex(of: ":")
            else { throw GatehouseError.clientAuthenticationFailed("Malformed Basic credentials.") }
            guard form["client_secret"] == nil else {
                throw GatehouseError.badRequest("Use one client authentication method only.")
            }
            let id = percentDecoded(decoded[..<colon])
            let secret = percentDecoded(decoded[decoded.index(after: colon)...])
            if let formID = form["client_id"], formID != id {
                throw GatehouseError.badRequest("client_id does not match the credentials.")
            }
            return (id, secret)
        }
        return (form["client_id"], form["client_secret"])
    }

    /// A Basic credential's half, percent-decoded (RFC 6749 §2.3.1). Without a `%` there is nothing to
    /// decode, and Foundation's decoding was 1.5 % of an introspection.
    private static func percentDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return String(text).removingPercentEncoding ?? ""
    }
}
