import GatehouseAPI

// Every access token's claims, written without Foundation's encoder (JB-3 holds them to the
// `Encodable` conformance). A hook's extra claims fall among the registered ones in sorted order, so
// a token that has any is left to the encoder (``AccessTokens/sign(_:typ:algorithm:)``).
extension AccessTokenClaims: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        writer.member("acr", acr)
        try writer.encoded("act", act)
        writer.member("amr", amr)
        writer.member("aud", aud)
        writer.member("auth_time", authTime)
        writer.member("client_id", clientID)
        try writer.member("cnf", cnf)
        writer.member("exp", exp)
        writer.member("iat", iat)
        if amr.contains(AuthenticationMethod.anonymous) { writer.member("is_anonymous", true) }
        writer.member("iss", iss)
        writer.member("jti", jti)
        writer.member("scope", scope)
        writer.member("sid", sid)
        writer.member("sub", sub)
    }
}

extension Confirmation: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        writer.member("jkt", jkt)
    }
}
