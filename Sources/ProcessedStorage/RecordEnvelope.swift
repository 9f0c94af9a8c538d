/// What a record file holds: a JSON object with the storage's version, the write date, the record's name and the
/// value.
///
/// ```json
/// {"name":"feed","value":{"items":[]},"version":"1","written":1714557600.123456}
/// ```
///
/// `written` is in seconds since 1970, as a `Double` (sub-second precision); `name` is the name given to `write`,
/// compared by `read` (a hashed file name may be shared by two names: see ``RecordFileName``).
struct RecordEnvelope<Value: Codable & Sendable>: Codable {
  /// The storage's `version` when the record was written.
  var version: String
  /// When the record was written, in seconds since 1970.
  var written: Double
  /// The record's name.
  var name: String
  /// The value.
  var value: Value
}

/// A record's envelope without its value: decoded first, so that a record of another version (whose value may not
/// decode any more), an old one or one of another name is dropped without decoding its value.
struct RecordHeader: Decodable {
  /// The storage's `version` when the record was written.
  var version: String
  /// When the record was written, in seconds since 1970.
  var written: Double
  /// The record's name.
  var name: String
}
