import Foundation

/// The file name of a record: a name maps to one file directly inside the storage's directory, and two names never
/// map to the same file (a long name's file also stores the name, which a read compares).
///
/// - **Escaped**: every UTF-8 byte of the name other than `a`–`z`, `0`–`9`, `-` and `_` becomes `%XX` (upper-case
///   hex), and `.json` is appended: `"feed"` → `feed.json`, `"User/42"` → `%55ser%2F42.json`. Upper-case letters are
///   escaped too, so that `"A"` and `"a"` stay two files on a case-insensitive file system (macOS by default): the
///   lower-cased escape still decodes to one name. No escape contains `/` or `.`, so a name can never reach a
///   subdirectory or a parent, nor end in `.tmp`. The empty name, whose escape is empty, is `%.json` (a lone `%`
///   is no escape's output). The name is first put in Unicode normalization form C, so that names equal as Swift
///   strings (`"e\u{301}"` and `"\u{E9}"`, both `"é"`) map to the same file, as they are the same key.
/// - **Hashed**, when the escape is longer than ``maxEscapedBytes`` (the file name would pass 200 bytes): the first
///   ``prefixBytes`` bytes of the escape, then `.`, the escape's FNV-1a 64-bit hash in 16 hex digits, `.`, the
///   escape's length, and `.json`: `%55ser…%2F.8c2f…d1.4096.json`. Its dots tell it apart from an escaped name.
///   Two long names can share a hashed file only when their hashes and lengths are equal (about 1 in 2⁶⁴): the record
///   stores its name, and a read of the other name sees a mismatch and reads `nil`.
///
/// ```swift
/// RecordFileName("feed").value  // "feed.json"
/// RecordFileName("../x").value  // "%2E%2E%2Fx.json"
/// ```
struct RecordFileName: Equatable {
  /// The extension of every record file.
  static let recordSuffix = ".json"
  /// The extension of every temporary file (a record being written, until it is renamed).
  static let temporarySuffix = ".tmp"
  /// The longest escape kept as it is: with `.json`, a file name of at most 200 bytes.
  static let maxEscapedBytes = 195
  /// How much of a long escape starts its hashed file name (which is then at most 150 + 1 + 16 + 1 + 20 + 5 bytes).
  static let prefixBytes = 150

  /// The file name, e.g. `feed.json`.
  let value: String
  /// Whether the file name is hashed (the escape was too long), so that it may be shared by another name.
  let isHashed: Bool

  init(_ name: String) {
    let escaped = Self.escape(name.precomposedStringWithCanonicalMapping)
    if escaped.isEmpty {
      value = "%" + Self.recordSuffix
      isHashed = false
    } else if escaped.utf8.count <= Self.maxEscapedBytes {
      value = escaped + Self.recordSuffix
      isHashed = false
    } else {
      let hash = String(Self.fnv1a64(escaped.utf8), radix: 16)
      let paddedHash = String(repeating: "0", count: 16 - hash.count) + hash
      value = "\(escaped.prefix(Self.prefixBytes)).\(paddedHash).\(escaped.utf8.count)\(Self.recordSuffix)"
      isHashed = true
    }
  }

  /// Whether `fileName` has the shape of a record file's name (escaped, empty or hashed, ending in `.json`): the
  /// files that `removeAll()` deletes and eviction counts. A foreign file with such a name (`notes.json`) cannot be
  /// told apart from a record.
  static func isRecord(_ fileName: String) -> Bool {
    guard fileName.hasSuffix(recordSuffix) else { return false }
    let stem = Array(fileName.utf8.dropLast(recordSuffix.utf8.count))
    if stem == [UInt8(ascii: "%")] { return true }
    let parts = stem.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    switch parts.count {
    case 1:
      return isCanonicalEscape(parts[0])
    case 3:
      let (prefix, hash, length) = (parts[0], parts[1], parts[2])
      return prefix.count == prefixBytes && prefix.allSatisfy(isEscapeCharacter)
        && hash.count == 16 && hash.allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        && !length.isEmpty && length.allSatisfy(isDigit)
    default:
      return false
    }
  }

  /// Whether `fileName` has the shape of a temporary file's name: `.` + a UUID + `.tmp`.
  static func isTemporary(_ fileName: String) -> Bool {
    guard fileName.hasPrefix("."), fileName.hasSuffix(temporarySuffix) else { return false }
    let middle = fileName.utf8.dropFirst().dropLast(temporarySuffix.utf8.count)
    return middle.count == 36
      && middle.allSatisfy { isUpperHexDigit($0) || $0 == UInt8(ascii: "-") }
  }

  /// A new temporary file name, `.` + a UUID + `.tmp`: unique across processes, and never a record's name.
  static func temporary(uuid: String) -> String { "." + uuid + temporarySuffix }

  /// The name's UTF-8 bytes, `a`–`z`, `0`–`9`, `-` and `_` kept, every other byte as `%XX`.
  static func escape(_ name: String) -> String {
    var escaped: [UInt8] = []
    escaped.reserveCapacity(name.utf8.count)
    let hexDigits = Array("0123456789ABCDEF".utf8)
    for byte in name.utf8 {
      if isSafe(byte) {
        escaped.append(byte)
      } else {
        escaped += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: escaped, as: UTF8.self)
  }

  /// FNV-1a, 64 bits: a small, stable hash (the same on every platform and launch, unlike `Hasher`).
  static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01B3
    }
    return hash
  }

  private static func isSafe(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || isDigit(byte) || byte == UInt8(ascii: "-")
      || byte == UInt8(ascii: "_")
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

  private static func isUpperHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

  /// A character that an escape contains: a safe byte, `%`, or an upper-case hex digit.
  private static func isEscapeCharacter(_ byte: UInt8) -> Bool {
    isSafe(byte) || byte == UInt8(ascii: "%") || isUpperHexDigit(byte)
  }

  /// Whether `bytes` is what ``escape(_:)`` makes of some non-empty name: safe bytes, and `%XX` for unsafe ones only.
  private static func isCanonicalEscape(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard !bytes.isEmpty else { return false }
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let byte = bytes[index]
      if isSafe(byte) {
        index += 1
        continue
      }
      guard byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]), !isSafe(high << 4 | low)
      else { return false }
      index += 3
    }
    return true
  }

  /// The value of an upper-case hex digit.
  private static func hexValue(_ byte: UInt8) -> UInt8? {
    if isDigit(byte) { return byte - UInt8(ascii: "0") }
    if (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) { return byte - UInt8(ascii: "A") + 10 }
    return nil
  }
}
