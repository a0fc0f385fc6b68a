/// `amr` values (RFC 8176 where it has one) a session reports, named once. Strategies and flows
/// refer to these, never to string literals.
public enum AuthenticationMethod {
    /// A password.
    public static let password = "pwd"
    /// A one-time code sent by email (and the verification link).
    public static let oneTimeCode = "otp"
    /// A one-time code sent by SMS.
    public static let sms = "sms"
    /// Proof of the mailbox through a recovery code or link: may set a new password for a while.
    public static let recovery = "recovery"
    /// A federated identity provider.
    public static let federated = "fed"
    /// Nothing: an anonymous account's session (``AnonymousSignIn``). Not an RFC 8176 value; tokens of
    /// such a session carry `is_anonymous: true`.
    public static let anonymous = "anon"
}

extension AuthenticationMethod {
    /// A second factor completed after the first (RFC 8176 `mfa`): what makes a sign-in multi-factor.
    public static let multiFactor = "mfa"
}
