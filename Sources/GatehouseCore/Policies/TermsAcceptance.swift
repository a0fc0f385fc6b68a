import Foundation

/// Records that a user accepted the terms versions a client names now. Used by every flow that can
/// accept terms on the way (sign-up, one-time codes) and by the agreements endpoint.
public enum TermsAcceptance {
    public static func record(userID: UUID, client: ClientRecord, at now: Date, stores: any Stores) async throws {
        try await stores.agreements.upsert(
            AgreementRecord(
                userID: userID, clientID: client.id, platformVersion: client.settings.termsPlatformVersion,
                clientVersion: client.settings.termsClientVersion, acceptedAt: now))
    }
}
