#if canImport(Observation)
    import Observation

    /// The auth state as an `@Observable` model for SwiftUI (iOS 17, macOS 14 and later).
    ///
    /// It follows ``AuthClient/events()`` on the main actor, so views that read ``state``, ``user`` or
    /// ``isSignedIn`` are redrawn when a user signs in, is updated, or is signed out — by the app, by a
    /// refresh the server refused, or by another device. Calls still go to ``client``:
    ///
    /// ```swift
    /// @main struct ExampleApp: App {
    ///     @State private var auth = AuthModel(client: AuthClient(configuration: .init(
    ///         baseURL: URL(string: "https://id.example.com")!, clientID: "example-ios")))
    ///     var body: some Scene {
    ///         WindowGroup {
    ///             switch auth.state {
    ///             case .restoring: ProgressView().task { await auth.client.restore() }
    ///             case .signedOut: SignInView(client: auth.client)
    ///             case .signedIn(let user): HomeView(user: user)
    ///             }
    ///         }
    ///     }
    /// }
    /// ```
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
    @MainActor
    @Observable
    public final class AuthModel {
        /// The state as of the last event.
        public private(set) var state: AuthState
        /// Why the last session ended, until the next sign-in.
        public private(set) var lastSignOutReason: SignOutReason?
        /// A sign-in waiting for its second factor, until a sign-in completes or the user signs out: a
        /// view can show the code form from it.
        public private(set) var pendingSecondFactor: SecondFactorChallenge?
        /// The client whose events this model follows; make calls on it.
        @ObservationIgnored public let client: AuthClient
        @ObservationIgnored private var following: Task<Void, Never>?

        /// Follows `client`'s events from now on, starting from its current state.
        public init(client: AuthClient) {
            self.client = client
            self.state = client.state
            following = Task { [weak self] in
                for await event in await client.events() {
                    guard let self else { return }
                    self.apply(event)
                }
            }
        }

        deinit { following?.cancel() }

        /// The signed-in user, if any.
        public var user: User? {
            if case .signedIn(let user) = state { return user }
            return nil
        }

        public var isSignedIn: Bool { user != nil }

        private func apply(_ event: AuthEvent) {
            switch event {
            case .current(let current): update(current)
            case .signedIn(let user):
                update(.signedIn(user))
                if lastSignOutReason != nil { lastSignOutReason = nil }
                if pendingSecondFactor != nil { pendingSecondFactor = nil }
            case .userUpdated(let user): update(.signedIn(user))
            case .signedOut(let reason):
                update(.signedOut)
                lastSignOutReason = reason
                if pendingSecondFactor != nil { pendingSecondFactor = nil }
            case .secondFactorRequired(let challenge): pendingSecondFactor = challenge
            case .tokenRefreshed: break
            }
        }

        /// Observation tells observers of every assignment, equal or not: assign only changes, so views
        /// are not redrawn for the stream's first event or a refresh.
        private func update(_ new: AuthState) {
            if state != new { state = new }
        }
    }
#endif
