import Foundation
import PushCore

/// Tokens named on the command line (`--token`, repeatable) or in a file (`--tokens-file`, one per line, `#`
/// comments, `-` for stdin), all validated before anything is sent.
enum TokenList {
    /// The tokens, or nil when neither option was given.
    static func read(tokens: [String], file: String?) throws -> [DeviceToken]? {
        var texts = tokens
        if let file {
            let data: Data?
            if file == "-" { data = FileHandle.standardInput.readDataToEndOfFile() } else {
                data = FileManager.default.contents(atPath: file)
            }
            guard let data else { throw CLIError.usage("cannot read tokens file \(file)") }
            texts = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        } else if texts.isEmpty {
            return nil
        }
        var result: [DeviceToken] = []
        for (i, text) in texts.enumerated() {
            do { result.append(try DeviceToken(parsing: text)) } catch {
                throw CLIError.usage("token \(i + 1): \(error)")
            }
        }
        guard !result.isEmpty else { throw CLIError.usage("no tokens given") }
        return result
    }
}
