import Argon2
import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Manage user accounts.",
        subcommands: [
            List.self, Show.self, Sessions.self, Export.self, Disable.self, Enable.self, SignOut.self, Delete.self, Import.self,
            HashPassword.self, Factors.self, ResetFactors.self, RemovePasskey.self,
        ])

    struct HashPassword: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hash-password",
            abstract: "Read a password from standard input and print its Argon2id PHC string (for password_hash in imports).")

        @OptionGroup var argon2: Argon2Options

        func run() throws {
            // From standard input, never an argument: arguments show up in `ps` and shell history.
            guard let password = readLine(strippingNewline: true), !password.isEmpty else {
                throw ValidationError("no password on standard input")
            }
            print(try Argon2.hashPHC(password: password, parameters: try argon2.resolve()))
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users from JSON Lines or another system's export (a file, or - for standard input).",
            discussion: """
                JSON Lines (--format jsonl, the default): one JSON object per line: email, phone (E.164) and/or \
                username, email_verified, phone_verified, profile, app_metadata, created_at (ISO 8601), identities \
                ([{provider, subject, email}]), and either password (hashed here with Argon2id) or password_hash \
                (Argon2id/i/d, bcrypt, Django or Keycloak PBKDF2, passlib scrypt or Firebase scrypt, kept as it is \
                and replaced by Argon2id at the user's next sign-in), and totp_secret (base32: the user's \
                authenticator app, kept working). --format firebase|auth0|supabase|keycloak|django reads that \
                system's export. Existing accounts are skipped; bad users are listed and skipped; --dry-run \
                writes nothing and reports what would be refused and why. Exits 1 if any user was rejected.
                """)

        @OptionGroup var store: StoreOptions
        @OptionGroup var argon2: Argon2Options
        @Argument(help: "JSON Lines file, or - for standard input") var file: String
        @Option(help: "Lines per transaction") var batch = 1000
        @Option(help: "jsonl, firebase, auth0, supabase, keycloak or django") var format = "jsonl"
        @Flag(help: "Check everything, write nothing: report what would be imported, skipped and refused") var dryRun = false
        @Option(help: "Firebase: the project's base64_signer_key") var firebaseSignerKey: String?
        @Option(help: "Firebase: the project's base64_salt_separator") var firebaseSaltSeparator: String?
        @Option(help: "Firebase: the project's rounds") var firebaseRounds: Int?
        @Option(help: "Firebase: the project's mem_cost") var firebaseMemCost: Int?
        @Flag(help: "No progress line on standard error") var quiet = false

        func validate() throws {
            guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be between 1 and 100000") }
            guard ExportFormat(rawValue: format) != nil else {
                throw ValidationError("--format must be one of \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }

        func run() async throws {
            guard let input = file == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: file) else {
                throw ValidationError("cannot open \(file)")
            }
            let total = file == "-" ? nil : (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
            let persistence = try await store.open(logger: cliLogger())
            let pool = HashingPool(threads: ProcessInfo.processInfo.activeProcessorCount, maxQueued: batch)
            let importer = UserImport(
                persistence: persistence, hasher: try PasswordHasher(parameters: try argon2.resolve(), pool: pool),
                clock: SystemWallClock(), secret: try await store.secret(for: persistence))
            var result = UserImport.Result()
            let started = Date()
            var bytesRead = 0
            do {
                var pending: [(number: Int, text: Substring)] = []
                if let exported = ExportFormat(rawValue: format), exported != .jsonl {
                    // Exports are one JSON document (or NDJSON in another shape): read whole, then converted.
                    let data = try input.readToEnd() ?? Data()
                    let converted = try exported.convert(data, firebase: firebaseConfig())
                    for (index, entry) in converted.enumerated() {
                        switch entry {
                        case .line(let text): pending.append((index + 1, Substring(text)))
                        case .rejected(let reason): result.rejected.append(UserImport.Rejection(line: index + 1, reason: reason))
                        }
                        if pending.count == batch || index == converted.count - 1 {
                            if !pending.isEmpty { result.add(try await importer.importBatch(pending, dryRun: dryRun)) }
                            pending.removeAll(keepingCapacity: true)
                            progress(result, bytes: index + 1, total: converted.count, since: started)
                        }
                    }
                }
                var lineNumber = 0
                var reader = LineReader(handle: input)
                while format == "jsonl", let bytes = try reader.next() {
                    lineNumber += 1
                    bytesRead += bytes.count + 1
                    let line = String(decoding: bytes, as: UTF8.self)
                    guard !line.allSatisfy(\.isWhitespace) else { continue }
                    pending.append((lineNumber, Substring(line)))
                    if pending.count == batch {
                        result.add(try await importer.importBatch(pending, dryRun: dryRun))
                        pending.removeAll(keepingCapacity: true)
                        progress(result, bytes: bytesRead, total: total, since: started)
                    }
                }
                if !pending.isEmpty { result.add(try await importer.importBatch(pending, dryRun: dryRun)) }
                if format == "jsonl" { progress(result, bytes: bytesRead, total: total, since: started) }
                if !quiet { FileHandle.standardError.write(Data("\n".utf8)) }
            } catch {
                await pool.shutdown()
                await persistence.shutdown()
                throw error
            }
            await pool.shutdown()
            await persistence.shutdown()
            for rejection in result.rejected.prefix(50) { FileHandle.standardError.write(Data("rejected \(rejection)\n".utf8)) }
            if result.rejected.count > 50 {
                FileHandle.standardError.write(Data("… and \(result.rejected.count - 50) more rejected lines\n".utf8))
            }
            print(
                #"{"dry_run": \#(dryRun), "imported": \#(result.imported), "existing": \#(result.existing), "rejected": \#(result.rejected.count), "seconds": \#(String(format: "%.1f", Date().timeIntervalSince(started)))}"#
            )
            if !result.rejected.isEmpty { throw ExitCode(1) }
        }

        /// Firebase's project hash parameters, when given (all four, or none).
        private func firebaseConfig() throws -> ExportFormat.FirebaseHashConfig? {
            switch (firebaseSignerKey, firebaseSaltSeparator, firebaseRounds, firebaseMemCost) {
            case (nil, nil, nil, nil): return nil
            case (let key?, let separator?, let rounds?, let memCost?):
                return .init(signerKey: key, saltSeparator: separator, rounds: rounds, memoryCost: memCost)
            default:
                throw ValidationError(
                    "give all four Firebase hash parameters: --firebase-signer-key, --firebase-salt-separator, --firebase-rounds, --firebase-mem-cost"
                )
            }
        }

        /// A progress bar when the size is known, a counter otherwise.
        private func progress(_ result: UserImport.Result, bytes: Int, total: Int?, since started: Date) {
            guard !quiet else { return }
            let done = result.imported + result.existing + result.rejected.count
            let rate = Double(done) / max(0.001, Date().timeIntervalSince(started))
            var line = "\r\(done) lines, \(Int(rate))/s"
            if let total, total > 0 {
                let fraction = min(1, Double(bytes) / Double(total))
                let filled = Int(fraction * 30)
                line =
                    "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] "
                    + String(format: "%3.0f%% ", fraction * 100) + line.dropFirst()
            }
            FileHandle.standardError.write(Data(line.utf8))
        }
    }
}

/// Lines of a file read in 1 MiB chunks (FileHandle has no line reader on Linux).
struct LineReader {
    let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false

    init(handle: FileHandle) { self.handle = handle }

    mutating func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return buffer[start..<newline]
            }
            if finished {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return buffer[start...]
            }
            buffer.removeFirst(start)
            start = 0
            if let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                buffer.append(contentsOf: chunk)
            } else {
                finished = true
            }
        }
    }
}
