// swift-tools-version:6.0
import PackageDescription

// One manifest for the server and the SDK, so that an app adds the SDK by this repository's URL and
// the `Gatehouse` product. SwiftPM builds only the targets a product reaches: an app that names
// `Gatehouse` compiles the SDK, its wire types, Argon2 and swift-crypto, never the server's packages
// (scripts/check-sdk-install proves it in CI). Platforms are per package, not per target, so the
// macOS minimum is the server's (Hummingbird needs macOS 14); iOS, tvOS and watchOS are the SDK's own.
// GatehouseSDK/Package.swift describes the same SDK sources alone, for the Keychain shim build
// (scripts/check-apple-paths) and `swift test --package-path GatehouseSDK`.
let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v14), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "Gatehouse", targets: ["Gatehouse"]),
        .executable(name: "gatehouse", targets: ["gatehouse"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        // Already in the graph through jwt-kit; named for WebAuthn's attestation certificates.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.15.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // The SDK's range: an app may already pin swift-crypto 3.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Already in the graph through Hummingbird; named for the spans the server and store open.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // The SDK (sources in GatehouseSDK/). Wire types shared by the server and the SDK: Foundation only.
        .target(name: "GatehouseAPI", path: "GatehouseSDK/Sources/GatehouseAPI"),
        // RFC 9106 in Swift: no listed package offers Argon2 and a system library would break the
        // two-command set-up (and an app's build). The server hashes passwords with it, the SDK derives PIN keys.
        .target(name: "Argon2", path: "GatehouseSDK/Sources/Argon2"),
        .target(
            name: "Gatehouse", dependencies: ["GatehouseAPI", "Argon2", .product(name: "Crypto", package: "swift-crypto")],
            path: "GatehouseSDK/Sources/Gatehouse"),
        .target(
            name: "GatehouseCore",
            dependencies: [
                "GatehouseAPI", "Argon2",
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA keys for RS256 (OIDC Core §15.1); jwt-kit depends on it already.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // One C function: SQLite's plan stability switch, which Swift cannot call (variadic).
        .target(name: "CSQLitePlanStability"),
        // Hand-written: unmaps the clean code pages start-up left mapped (see its source).
        .target(name: "CCodePages"),
        .target(
            name: "GatehouseStore",
            dependencies: [
                "GatehouseCore", "GatehouseAPI", "CSQLitePlanStability",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                // The pool's own error (its circuit breaker) is a storage fault to answer with 503.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Hand-written SMTP transport: no listed Swift package speaks SMTP.
        .target(
            name: "GatehouseSMTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseCore", "GatehouseAPI", "GatehouseStore", "GatehouseSMTP", "CCodePages",
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [
                .copy("Resources/openapi.yaml"), .copy("Resources/templates"), .copy("Resources/console"),
                .copy("Resources/common-passwords.txt"), .copy("Resources/common-passwords.LICENSE"),
            ]
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseServer", "GatehouseStore", "GatehouseCore", "GatehouseAPI", "Argon2",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The load generator's logic, testable apart from its command line.
        .target(
            name: "GatehouseBench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                "GatehouseAPI",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "gatehouse-bench",
            dependencies: [
                "GatehouseBench",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The SDK example: `swift run gatehouse-example --url … --client-id …`.
        .executableTarget(name: "gatehouse-example", dependencies: ["Gatehouse"], path: "Examples/GatehouseExample"),
        .target(
            name: "GatehouseTesting",
            dependencies: [
                "GatehouseCore", "GatehouseServer", "GatehouseStore", "Argon2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresKit", package: "postgres-kit"),
            ]
        ),
        .testTarget(
            name: "Argon2Tests", dependencies: ["Argon2"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GatehouseBenchTests", dependencies: ["GatehouseBench"]),
        .testTarget(
            name: "GatehouseSDKTests",
            dependencies: [
                "Gatehouse", "GatehouseTesting", "GatehouseServer", "GatehouseCore",
                "Argon2", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        // The SDK package's own unit tests (scripted transport, manual clock), compiled here as well so
        // the README's `swift test` runs them; `swift test --package-path GatehouseSDK` runs them alone.
        .testTarget(
            name: "GatehouseSDKUnitTests", dependencies: ["Gatehouse"],
            path: "GatehouseSDK/Tests/GatehouseUnitTests"),
        .testTarget(
            name: "GatehouseSMTPTests",
            dependencies: [
                "GatehouseSMTP", "GatehouseTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: ["GatehouseCore", "GatehouseTesting", "Argon2"]),
        .testTarget(
            name: "GatehouseStoreTests",
            dependencies: [
                "GatehouseStore", "GatehouseTesting", .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
            ]),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseTesting", "GatehouseStore", "GatehouseSMTP",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Yams", package: "Yams"),
                // swift-metrics' own test backend: EDGE-1 counts one edge's metrics, not the process's.
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                "Argon2",
            ]
        ),
    ]
)

// Server-side files declare every module whose members they use (SE-0444, MemberImportVisibility): a
// member reached only through another file's import is an error, not a silent dependency. The SDK's
// targets are left as they are: apps still build them with Swift 6.0 toolchains.
let sdkTargets: Set<String> = ["GatehouseAPI", "Argon2", "Gatehouse", "GatehouseSDKUnitTests", "gatehouse-example", "Argon2Tests"]
for target in package.targets where !sdkTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
