/// A bad `hashAlgorithm` or hash parameter in an import, named as Firebase names it (`INVALID_HASH_ROUNDS`, …), so
/// the API can pass `code` through as the message.
package struct ImportParameterError: Error, Equatable {
    /// Firebase's error name, e.g. `INVALID_HASH_MEMORY_COST`.
    package var code: String

    /// Creates an error with Firebase's name.
    package init(code: String) {
        self.code = code
    }
}
