extension PushConfiguration {
    /// Every secret file this configuration names, in a stable order (the database password, the global proxy's
    /// credentials, then each app by id: its .p12 and password or its .p8, its proxy's credentials, its webhook
    /// secret, its user secret, its VAPID key, its FCM service account). Secrets from environment variables are not files and are not listed.
    public var secretFiles: [SecretFile] {
        var files: [SecretFile] = []
        if let file = databasePasswordFile { files.append(SecretFile(key: "databasePasswordFile", path: file)) }
        if case .file(let path) = proxy?.credentials { files.append(SecretFile(key: "proxyCredentialsFile", path: path)) }
        for (id, app) in apps.sorted(by: { $0.key < $1.key }) {
            let at = "apps.\(id)"
            let apnsAt = app.apnsKeysAreFlat ? at : "\(at).apns"
            switch app.apns?.auth {
            case .certificate(let p12, let password):
                files.append(SecretFile(key: "\(apnsAt).auth.p12", path: p12))
                if case .file(let path) = password { files.append(SecretFile(key: "\(apnsAt).auth.passwordFile", path: path)) }
            case .token(let p8, _, _):
                files.append(SecretFile(key: "\(apnsAt).auth.p8", path: p8))
            case nil: break
            }
            if case .file(let path) = app.proxy?.credentials {
                files.append(SecretFile(key: "\(at).proxyCredentialsFile", path: path))
            }
            if case .file(let path) = app.webhook?.secret {
                files.append(SecretFile(key: "\(at).webhook.secretFile", path: path))
            }
            if case .file(let path) = app.userSecret {
                files.append(SecretFile(key: "\(at).userSecretFile", path: path))
            }
            if let webPush = app.webPush { files.append(SecretFile(key: "\(at).webpush.vapidKey", path: webPush.vapidKey)) }
            if let unifiedPush = app.unifiedPush {
                files.append(SecretFile(key: "\(at).unifiedpush.vapidKey", path: unifiedPush.vapidKey))
            }
            if let fcm = app.fcm { files.append(SecretFile(key: "\(at).fcm.serviceAccount", path: fcm.serviceAccount)) }
            if let harmonyos = app.harmonyos {
                files.append(SecretFile(key: "\(at).harmonyos.serviceAccount", path: harmonyos.serviceAccount))
            }
            if let hms = app.hms { files.append(SecretFile(key: "\(at).hms.clientSecretFile", path: hms.clientSecretFile)) }
        }
        return files
    }
}
