import Foundation

/// The unit that counts as one client address for throttles, rate limits and the audit log. Apart from
/// ``LoginThrottle`` so the audit record and the rate limiter need none of the throttle's stores.
enum AddressBlock {
    /// IPv6 clients usually own a whole /64: counting per address would give each of them 2^64 tries.
    static func of(_ ip: String) -> String {
        // An IPv4 client of a dual-stack listener shows up as an IPv4-mapped address (::ffff:a.b.c.d,
        // ::ffff:cb00:7109, or spelt out): count it as the IPv4 address it is.
        if let mapped = mappedIPv4(ip) { return mapped }
        guard ip.contains(":") else { return ip }
        var groups = ip.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if let gap = groups.firstIndex(of: ""), groups.count < 8 {
            // Expand "::" so that the first four groups are the real /64 prefix.
            let missing = 8 - groups.filter { !$0.isEmpty }.count
            groups =
                Array(groups[..<gap]).filter { !$0.isEmpty } + Array(repeating: "0", count: missing)
                + Array(groups[(gap + 1)...]).filter { !$0.isEmpty }
        }
        return groups.prefix(4).map { $0.lowercased() }.joined(separator: ":") + "::/64"
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:0:0/96`), if it is one.
    static func mappedIPv4(_ ip: String) -> String? {
        let lower = ip.lowercased()
        let rest: Substring
        if lower.hasPrefix("::ffff:") {
            rest = lower.dropFirst(7)
        } else if lower.hasPrefix("0:0:0:0:0:ffff:") {
            rest = lower.dropFirst(15)
        } else {
            return nil
        }
        if rest.contains(".") { return String(rest) }
        let groups = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == 2, let high = UInt16(groups[0], radix: 16), let low = UInt16(groups[1], radix: 16) else { return nil }
        return [high >> 8, high & 0xff, low >> 8, low & 0xff].map(String.init).joined(separator: ".")
    }
}
