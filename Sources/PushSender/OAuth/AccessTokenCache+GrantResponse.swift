import PushCore

extension AccessTokenCache.Grant {
    /// The token endpoint's answer to a grant (RFC 6749 §5: FCM's JWT bearer, Huawei's client credentials): 200 with
    /// `access_token` and `expires_in` is a grant; anything else is a credential failure naming the endpoint and, when
    /// it gave them, its `error` and `error_description` (RFC 6749 §5.2: e.g. `invalid_grant: Invalid JWT
    /// Signature.`), so an operator reads why the credentials were refused. The response body is never quoted otherwise (it could hold a token).
    public init(status: Int, body: some Collection<UInt8>, tokenURI: String) throws(CredentialError) {
        let json = try? JSONValue(parsing: body)
        guard status == 200 else {
            // Google's `error` is a string (`invalid_grant`), Huawei's a number (`1101`, with `sub_error`).
            let error = json?["error"]?.stringValue ?? json?["error"]?.intValue.map { String($0) }
            let description = json?["error_description"]?.stringValue
            let why = [error, description].compactMap { $0 }.joined(separator: ": ")
            throw CredentialError(.invalidInput, "\(tokenURI) refused the grant (HTTP \(status))" + (why.isEmpty ? "" : ": \(why)"))
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
