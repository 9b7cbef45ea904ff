import PushCore

extension AccessTokenCache.Grant {
    /// The token endpoint's answer to a JWT-bearer grant (RFC 6749 §5): 200 with `access_token` and `expires_in`
    /// is a grant; anything else is a credential failure naming the endpoint and, when it gave them, its `error`
    /// and `error_description` (RFC 6749 §5.2: e.g. `invalid_grant: Invalid JWT Signature.`), so an operator reads
    /// why the service account was refused. The response body is never quoted otherwise (it could hold a token).
    public init(status: Int, body: some Collection<UInt8>, tokenURI: String) throws(CredentialError) {
        let json = try? JSONValue(parsing: body)
        guard status == 200 else {
            let error = json?["error"]?.stringValue
            let description = json?["error_description"]?.stringValue
            let why = [error, description].compactMap { $0 }.joined(separator: ": ")
            throw CredentialError(.invalidInput, "\(tokenURI) refused the service account's grant (HTTP \(status))" + (why.isEmpty ? "" : ": \(why)"))
        }
        guard let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            throw CredentialError(.invalidInput, "\(tokenURI) answered 200 without an access_token")
        }
        guard let seconds = json?["expires_in"]?.doubleValue, seconds > 0 else {
            throw CredentialError(.invalidInput, "\(tokenURI) answered 200 without a positive expires_in")
        }
        self.init(accessToken: token, expiresIn: seconds)
    }
}
