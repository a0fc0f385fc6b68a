import Foundation
import GatehouseAPI
import GatehouseCore

// The hot responses' wire types, their members in sorted key order as `WireCoding.encoder()` writes
// them (JB-1 holds each to its `Encodable` conformance with every field set).

extension TokenResponse: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        writer.member("access_token", accessToken)
        writer.member("expires_in", expiresIn)
        writer.member("id_token", idToken)
        writer.member("is_new", isNew)
        writer.member("issued_token_type", issuedTokenType)
        writer.member("recovery_codes", recoveryCodes)
        writer.member("refresh_token", refreshToken)
        writer.member("scope", scope)
        writer.member("token_type", tokenType)
        try writer.member("user", user)
    }
}

extension IntrospectionResponse: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        try writer.encoded("act", act)
        writer.member("active", active)
        writer.member("aud", aud)
        writer.member("client_id", clientId)
        try writer.member("cnf", cnf)
        writer.member("exp", exp)
        writer.member("iat", iat)
        writer.member("iss", iss)
        writer.member("jti", jti)
        writer.member("scope", scope)
        writer.member("sid", sid)
        writer.member("sub", sub)
        writer.member("token_type", tokenType)
    }
}

extension User: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        writer.member("agreements_up_to_date", agreementsUpToDate)
        try writer.encoded("app_metadata", appMetadata)
        writer.member("created_at", createdAt)
        writer.member("email", email)
        writer.member("email_verified", emailVerified)
        writer.member("has_password", hasPassword)
        writer.member("id", id.uuidString.lowercased())
        try writer.encoded("identities", identities)
        if isAnonymous == true { writer.member("is_anonymous", true) }
        writer.member("last_login_at", lastLoginAt)
        writer.member("missing_required_fields", missingRequiredFields)
        writer.member("phone", phone)
        writer.member("phone_verified", phoneVerified)
        try writer.member("profile", profile)
        writer.member("state", state.rawValue)
        writer.member("username", username)
    }
}

extension Profile: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        try writer.member("address", address)
        writer.member("birthdate", birthdate)
        writer.member("family_name", familyName)
        writer.member("gender", gender)
        writer.member("given_name", givenName)
        writer.member("locale", locale)
        try writer.encoded("metadata", metadata)
        writer.member("middle_name", middleName)
        writer.member("name", name)
        writer.member("nickname", nickname)
        writer.member("picture", picture)
        writer.member("preferred_username", preferredUsername)
        writer.member("profile", profileURL)
        writer.member("website", website)
        writer.member("zoneinfo", zoneinfo)
    }
}

extension PostalAddress: JSONBodyEncodable {
    public func writeMembers(to writer: inout JSONBodyWriter) throws {
        writer.member("country", country)
        writer.member("formatted", formatted)
        writer.member("locality", locality)
        writer.member("postal_code", postalCode)
        writer.member("region", region)
        writer.member("street_address", streetAddress)
    }
}
