import PushCore

extension Sender {
    /// A sender for one configured app: its credentials (.p12 or .p8), endpoint and, for the simulator, the
    /// simulator's CA. Throws ``CredentialError`` when the credentials cannot be loaded and ``SenderError``
    /// (`.certificateExpired`) before connecting with an expired certificate.
    public static func forApp(
        _ app: AppSettings, in configuration: PushConfiguration, sink: DeliverySink?,
        settings: SenderConfiguration = .init()
    ) throws -> Sender {
        let credentials = try makeCredentials(for: app)
        let notAfterMs = (credentials as? CertificateCredentials).map { $0.facts.notAfter * 1000 }
        return try Sender(
            app: app, simulator: configuration.simulator, credentials: credentials, configuration: settings,
            sink: sink, certificateNotAfterMs: notAfterMs)
    }
}
