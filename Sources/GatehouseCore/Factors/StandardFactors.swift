import Foundation

/// The factors a server offers unless told otherwise: an authenticator app, its recovery codes, a
/// passkey, and a code to the user's verified email address or phone for a user without an app where a
/// second factor is required.
public enum SecondFactors {
    public static func standard(
        secret: ServerSecret, clock: any WallClock, relyingParty: RelyingParty = PasskeySettings().relyingParty(publicURL: "")
    ) -> [any SecondFactor] {
        [
            TOTPFactor(secret: secret, clock: clock), RecoveryCodeFactor(secret: secret, clock: clock),
            PasskeyFactor(secret: secret, relyingParty: relyingParty, clock: clock),
            AddressCodeFactor(.email, secret: secret, clock: clock), AddressCodeFactor(.sms, secret: secret, clock: clock),
        ]
    }
}
