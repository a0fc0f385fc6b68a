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
            abstract: "Import users from JSON Lines (a file, or - for standard input).",
            discussion: """
                One JSON object per line: email and/or phone (E.164), email_verified, phone_verified, profile, and \
                either password (hashed here with Argon2id) or password_hash (an Argon2id PHC string or a bcrypt \
                hash, kept as it is), and totp_secret (base32: the user's authenticator app, kept working). Existing \
                accounts are skipped; bad lines are listed and skipped. Exits 1 if any line was rejected.
                """)

        @OptionGroup var store: StoreOptions
        @OptionGroup var argon2: Argon2Options
        @Argument(help: "JSON Lines file, or - for standard input") var file: String
        @Option(help: "Lines per transaction") var batch = 1000
        @Flag(help: "No progress line on standard error") var quiet = false

        func validate() throws {
            guard (1...100_000).contains(batch) else { throw ValidationError("--batch must be between 1 and 100000") }
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
                var lineNumber = 0
                var reader = LineReader(handle: input)
                while let bytes = try reader.next() {
                    lineNumber += 1
                    bytesRead += bytes.count + 1
                    let line = String(decoding: bytes, as: UTF8.self)
                    guard !line.allSatisfy(\.isWhitespace) else { continue }
                    pending.append((lineNumber, Substring(line)))
                    if pending.count == batch {
                        result.add(try await importer.importBatch(pending))
                        pending.removeAll(keepingCapacity: true)
                        progress(result, bytes: bytesRead, total: total, since: started)
                    }
                }
                if !pending.isEmpty { result.add(try await importer.importBatch(pending)) }
                progress(result, bytes: bytesRead, total: total, since: started)
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
                #"{"imported": \#(result.imported), "existing": \#(result.existing), "rejected": \#(result.rejected.count), "seconds": \#(String(format: "%.1f", Date().timeIntervalSince(started)))}"#
            )
            if !result.rejected.isEmpty { throw ExitCode(1) }
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
