import Foundation
import GatehouseAPI

/// A one-time code to the user's verified email address (`email_otp`) or phone number (`sms_otp`) as a
/// second factor, for a sign-in that requires one from a user who has no authenticator app. Never for a
/// sign-in whose first factor was that same channel (``offered(to:firstFactor:smsAvailable:)``). The code
/// is bound to the waiting sign-in's client and the address, consumed in the completing transaction.
public struct AddressCodeFactor: SecondFactor {
    public enum Channel: Sendable {
        case email, sms
    }

    public let channel: Channel
    let secret: ServerSecret
    let clock: any WallClock

    public init(_ channel: Channel, secret: ServerSecret, clock: any WallClock) {
        self.channel = channel
        self.secret = secret
        self.clock = clock
    }

    public var id: String { Self.id(channel) }
    public var amr: String { channel == .email ? AuthenticationMethod.oneTimeCode : AuthenticationMethod.sms }

    static func id(_ channel: Channel) -> String { channel == .email ? "email_otp" : "sms_otp" }

    /// The user's proved address on this channel, where the code goes.
    func address(of user: UserRecord) -> String? {
        switch channel {
        case .email: user.emailVerified ? user.email : nil
        case .sms: user.phoneVerified ? user.phone : nil
        }
    }

    /// The address factors `user` may complete a sign-in with: a proved address on a channel that was
    /// not the first factor's (a code to the mailbox that just signed in proves nothing new; a recovery
    /// link proved the mailbox too).
    static func offered(to user: UserRecord, firstFactor amr: [String], smsAvailable: Bool) -> [String] {
        var ids: [String] = []
        let mailbox = amr.contains(AuthenticationMethod.oneTimeCode) || amr.contains(AuthenticationMethod.recovery)
        if user.emailVerified, user.email != nil, !mailbox { ids.append(id(.email)) }
        if smsAvailable, user.phoneVerified, user.phone != nil, !amr.contains(AuthenticationMethod.sms) { ids.append(id(.sms)) }
        return ids
    }

    public func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool { false }

    public func verify(_ response: String, userID: UUID, clientID: String, stores: any Stores) async throws -> Bool {
        let code = response.filter { !$0.isWhitespace }
        guard code.count == 6, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber),
            let user = try await stores.users.find(id: userID), let address = address(of: user),
            let record = try await stores.codes.findOpen(purpose: .secondFactor, identifier: address, clientID: clientID),
            record.userID == userID, record.expiresAt > clock.now(), let stored = record.codeHash
        else { return false }
        let expected = secret.codeHashes(code, binding: OneTimeCodes.binding(.secondFactor, clientID, address))
        guard Secrets.constantTimeEqualsAny(stored, expected) else { return false }
        return try await stores.codes.consume(id: record.id, at: clock.now())
    }
}
