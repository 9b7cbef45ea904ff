// The only Swift file that talks to OpenSSL (libcrypto, and libssl to install a client identity). Every C handle
// is owned by a `final class` that frees it in `deinit`; every C return code goes through `check()`, which throws
// ``CredentialError`` with OpenSSL's own error text. Everything here is internal except ``OpenSSLLibrary``.
import COpenSSL
import Foundation
import Synchronization

/// Process-wide OpenSSL setup.
public enum OpenSSLLibrary {
    /// Loads OpenSSL's `legacy` and `default` providers, once per process.
    ///
    /// OpenSSL 3 keeps RC2-40 and 3DES (what macOS Keychain uses in .p12 exports) in the `legacy` provider;
    /// without it `PKCS12_parse` fails with `0308010C … unsupported`. Loading any provider explicitly stops
    /// OpenSSL from loading `default` implicitly, so both are loaded. libcurl shares this libcrypto, so its own
    /// P12 handling benefits too. Safe to call from any thread, any number of times.
    public static func loadProviders() { _ = providersLoaded }

    /// Whether the legacy provider is available (false on systems built without it).
    public static var legacyProviderLoaded: Bool { providersLoaded }

    private static let providersLoaded: Bool = {
        let legacy = OSSL_PROVIDER_load(nil, "legacy")
        let standard = OSSL_PROVIDER_load(nil, "default")
        ERR_clear_error()
        return legacy != nil && standard != nil
    }()
}

// MARK: - Errors

/// OpenSSL's text for an X.509 verification result (`X509_V_ERR_*`), e.g. "certificate signature failure".
func x509VerificationErrorText(_ code: Int) -> String {
    String(cString: X509_verify_cert_error_string(code))
}

/// Drains this thread's OpenSSL error queue into one line.
private func drainOpenSSLErrors() -> String {
    var parts: [String] = []
    while case let code = ERR_get_error(), code != 0 {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return parts.isEmpty ? "no OpenSSL error reported" : parts.joined(separator: "; ")
}

/// The one place OpenSSL results become errors. `result` is an OpenSSL status (> 0 means success) or a
/// pointer (nil means failure); the thrown message is `what` plus OpenSSL's error strings.
@discardableResult
func check<T>(_ result: T?, _ what: @autoclosure () -> String, code: CredentialError.Code = .openssl)
    throws(CredentialError) -> T
{
    let failed: Bool
    switch result {
    case nil: failed = true
    case let status as Int32: failed = status <= 0
    case let status as Int: failed = status <= 0
    default: failed = false
    }
    guard let value = result, !failed else {
        var text = drainOpenSSLErrors()
        if text.contains("unsupported") && !OpenSSLLibrary.legacyProviderLoaded {
            text += " (the OpenSSL legacy provider, needed for RC2/3DES .p12 files, could not be loaded)"
        }
        throw CredentialError(code, "\(what()): \(text)")
    }
    return value
}

// MARK: - Handles

/// A memory BIO: the way bytes move in and out of OpenSSL without touching disk.
final class OpenSSLBIO {
    let raw: OpaquePointer

    init() throws(CredentialError) { raw = try check(BIO_new(BIO_s_mem()), "BIO_new") }

    convenience init(_ bytes: [UInt8]) throws(CredentialError) {
        try self.init()
        if !bytes.isEmpty {
            try check(bytes.withUnsafeBytes { BIO_write(raw, $0.baseAddress, Int32($0.count)) }, "BIO_write")
        }
    }

    deinit { BIO_free(raw) }

    /// Everything written to the BIO so far.
    var bytes: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let count = pp_BIO_get_mem_data(raw, &data)
        guard let data, count > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }
}

/// An `EVP_PKEY`.
final class OpenSSLKey {
    let raw: OpaquePointer

    init(owning raw: OpaquePointer) { self.raw = raw }
    deinit { EVP_PKEY_free(raw) }

    /// A fresh NIST P-256 key.
    static func generateP256() throws(CredentialError) -> OpenSSLKey {
        OpenSSLKey(owning: try check(pp_EVP_EC_gen_P256(), "cannot generate a P-256 key"))
    }

    /// The private key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`), in memory.
    func privateKeyPEM() throws(CredentialError) -> [UInt8] {
        let bio = try OpenSSLBIO()
        try check(PEM_write_bio_PrivateKey(bio.raw, raw, nil, nil, 0, nil, nil), "PEM_write_bio_PrivateKey")
        return bio.bytes
    }

    /// The public key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
    func publicKeyPEM() throws(CredentialError) -> [UInt8] {
        let bio = try OpenSSLBIO()
        try check(PEM_write_bio_PUBKEY(bio.raw, raw), "PEM_write_bio_PUBKEY")
        return bio.bytes
    }
}

/// An `X509` certificate.
final class OpenSSLCertificate {
    let raw: OpaquePointer

    init(owning raw: OpaquePointer) { self.raw = raw }
    deinit { X509_free(raw) }

    /// Parses the first certificate of a PEM file, or a DER certificate (Apple's `.cer` downloads).
    convenience init(parsing data: [UInt8]) throws(CredentialError) {
        ERR_clear_error()
        let bio = try OpenSSLBIO(data)
        let isPEM = String(decoding: data.prefix(64 * 1024), as: UTF8.self).contains("-----BEGIN")
        let x509 = isPEM ? PEM_read_bio_X509(bio.raw, nil, nil, nil) : d2i_X509_bio(bio.raw, nil)
        self.init(owning: try check(x509, "not a PEM or DER X.509 certificate", code: .invalidInput))
    }

    /// The certificate as PEM.
    func pem() throws(CredentialError) -> [UInt8] {
        let bio = try OpenSSLBIO()
        try check(PEM_write_bio_X509(bio.raw, raw), "PEM_write_bio_X509")
        return bio.bytes
    }

    /// The subject as one line, as `openssl x509 -subject -nameopt oneline,-esc_msb` prints it.
    func subjectOneLine() throws(CredentialError) -> String {
        let bio = try OpenSSLBIO()
        try check(X509_NAME_print_ex(bio.raw, X509_get_subject_name(raw), 0, pp_XN_FLAG_ONELINE_UTF8()) >= 0 ? 1 : 0,
                  "X509_NAME_print_ex")
        return String(decoding: bio.bytes, as: UTF8.self)
    }

    /// Every subject UID (OID 0.9.2342.19200300.100.1.1) value, in order.
    func subjectUserIDs() -> [String] {
        let name = X509_get_subject_name(raw)
        var values: [String] = []
        var index: Int32 = -1
        while true {
            index = X509_NAME_get_index_by_NID(name, NID_userId, index)
            guard index >= 0 else { break }
            if let entry = X509_NAME_get_entry(name, index), let value = utf8(X509_NAME_ENTRY_get_data(entry)) {
                values.append(value)
            }
        }
        return values
    }

    /// The DER content of the extension with this dotted OID, or nil when absent.
    func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { ERR_clear_error(); return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(raw, object, -1)
        guard index >= 0, let ext = X509_get_ext(raw, index), let data = X509_EXTENSION_get_data(ext) else { return nil }
        return bytes(of: data)
    }

    /// notBefore and notAfter as seconds since 1970.
    func validity() throws(CredentialError) -> (notBefore: Int64, notAfter: Int64) {
        func seconds(_ time: UnsafePointer<ASN1_TIME>?, _ what: String) throws(CredentialError) -> Int64 {
            var parts = tm()
            try check(ASN1_TIME_to_tm(time, &parts), "certificate has an unreadable \(what)", code: .invalidInput)
            return Int64(timegm(&parts))
        }
        return (try seconds(X509_get0_notBefore(raw), "notBefore"), try seconds(X509_get0_notAfter(raw), "notAfter"))
    }

    /// Whether `key` is this certificate's private key.
    func matches(_ key: OpenSSLKey) -> Bool {
        defer { ERR_clear_error() }
        return X509_check_private_key(raw, key.raw) == 1
    }
}

private func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
    let count = Int(ASN1_STRING_length(string))
    guard count > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: count))
}

private func utf8(_ string: UnsafePointer<ASN1_STRING>?) -> String? {
    var out: UnsafeMutablePointer<UInt8>?
    let count = ASN1_STRING_to_UTF8(&out, string)
    guard count >= 0, let out else { ERR_clear_error(); return nil }
    defer { pp_OPENSSL_free(out) }
    return String(decoding: UnsafeBufferPointer(start: out, count: Int(count)), as: UTF8.self)
}

// MARK: - Issuing certificates

extension OpenSSLCertificate {
    /// What to put in a new certificate.
    struct Spec {
        /// Subject RDNs in order, by OpenSSL short name (`C`, `O`, `OU`, `CN`, `UID`).
        var subject: [(field: String, value: String)]
        var serial: UInt64
        var notBefore: Int64
        var notAfter: Int64
        /// X.509v3 extensions in OpenSSL config syntax, e.g. `("basicConstraints", "critical,CA:TRUE")`.
        var extensions: [(name: String, value: String)]
        /// Extensions given as an OID and the DER of their value (Apple's push OIDs).
        var rawExtensions: [(oid: String, der: [UInt8], critical: Bool)] = []
    }

    /// Issues a certificate for `key` signed by `issuerKey` (self-signed when `issuer` is nil), SHA-256.
    static func issue(_ spec: Spec, key: OpenSSLKey, issuer: OpenSSLCertificate?, issuerKey: OpenSSLKey)
        throws(CredentialError) -> OpenSSLCertificate
    {
        ERR_clear_error()
        let cert = OpenSSLCertificate(owning: try check(X509_new(), "X509_new"))
        let x = cert.raw
        try check(X509_set_version(x, 2), "X509_set_version")
        try check(ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), spec.serial), "serial number")
        try check(ASN1_TIME_set(X509_getm_notBefore(x), time_t(spec.notBefore)), "notBefore")
        try check(ASN1_TIME_set(X509_getm_notAfter(x), time_t(spec.notAfter)), "notAfter")
        let name = X509_get_subject_name(x)
        for (field, value) in spec.subject {
            let utf8 = Array(value.utf8)
            try check(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, utf8, Int32(utf8.count), -1, 0),
                      "subject \(field)")
        }
        try check(X509_set_issuer_name(x, X509_get_subject_name(issuer?.raw ?? x)), "issuer name")
        try check(X509_set_pubkey(x, key.raw), "X509_set_pubkey")

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.raw ?? x, x, nil, nil, 0)
        for (extName, value) in spec.extensions {
            let ext = try check(X509V3_EXT_nconf(nil, &context, extName, value), "extension \(extName)=\(value)")
            defer { X509_EXTENSION_free(ext) }
            try check(X509_add_ext(x, ext, -1), "X509_add_ext \(extName)")
        }
        for (oid, der, critical) in spec.rawExtensions {
            let object = try check(OBJ_txt2obj(oid, 1), "OID \(oid)")
            defer { ASN1_OBJECT_free(object) }
            let octets = try check(ASN1_OCTET_STRING_new(), "ASN1_OCTET_STRING_new")
            defer { ASN1_OCTET_STRING_free(octets) }
            try check(ASN1_OCTET_STRING_set(octets, der, Int32(der.count)), "extension \(oid) value")
            let ext = try check(X509_EXTENSION_create_by_OBJ(nil, object, critical ? 1 : 0, octets), "extension \(oid)")
            defer { X509_EXTENSION_free(ext) }
            try check(X509_add_ext(x, ext, -1), "X509_add_ext \(oid)")
        }
        try check(X509_sign(x, issuerKey.raw, EVP_sha256()), "X509_sign")
        return cert
    }
}

// MARK: - PKCS#12

/// A `PKCS12` container (.p12).
final class OpenSSLPKCS12 {
    let raw: OpaquePointer

    /// How the container is encrypted.
    enum Encryption {
        /// AES-256-CBC with PBKDF2 for certificate and key, HMAC-SHA-256 MAC (OpenSSL 3 default).
        case modern
        /// PBE-SHA1-RC2-40 for the certificate, PBE-SHA1-3DES for the key, SHA-1 MAC (macOS Keychain).
        case legacy
    }

    init(owning raw: OpaquePointer) { self.raw = raw }
    deinit { PKCS12_free(raw) }

    /// Reads a DER .p12.
    convenience init(der: [UInt8]) throws(CredentialError) {
        OpenSSLLibrary.loadProviders()
        ERR_clear_error()
        let bio = try OpenSSLBIO(der)
        self.init(owning: try check(d2i_PKCS12_bio(bio.raw, nil), "not a PKCS#12 (.p12) file", code: .invalidInput))
    }

    /// Packs a key and certificate (plus chain) into a password-protected container.
    static func create(
        password: String, friendlyName: String, key: OpenSSLKey, certificate: OpenSSLCertificate,
        chain: [OpenSSLCertificate] = [], encryption: Encryption
    ) throws(CredentialError) -> OpenSSLPKCS12 {
        OpenSSLLibrary.loadProviders()
        ERR_clear_error()
        let stack = try check(pp_sk_X509_new_null(), "sk_X509_new_null")
        defer { pp_sk_X509_pop_free(stack) }
        for extra in chain {
            X509_up_ref(extra.raw)
            guard pp_sk_X509_push(stack, extra.raw) > 0 else { X509_free(extra.raw); throw CredentialError(.openssl, "sk_X509_push failed") }
        }
        let (keyNID, certNID, mac) = switch encryption {
        case .modern: (NID_aes_256_cbc, NID_aes_256_cbc, EVP_sha256())
        case .legacy: (NID_pbe_WithSHA1And3_Key_TripleDES_CBC, NID_pbe_WithSHA1And40BitRC2_CBC, EVP_sha1())
        }
        // mac_iter -1: no MAC yet, so the MAC digest can be chosen explicitly below.
        let p12 = OpenSSLPKCS12(owning: try check(
            PKCS12_create(password, friendlyName, key.raw, certificate.raw, stack, keyNID, certNID, 2048, -1, 0),
            "PKCS12_create"))
        try check(PKCS12_set_mac(p12.raw, password, -1, nil, 0, 2048, mac), "PKCS12_set_mac")
        return p12
    }

    /// The container as DER bytes.
    func der() throws(CredentialError) -> [UInt8] {
        let bio = try OpenSSLBIO()
        try check(i2d_PKCS12_bio(bio.raw, raw), "i2d_PKCS12_bio")
        return bio.bytes
    }

    /// Verifies the MAC with `password`, then decrypts the key, certificate and chain.
    func parse(password: String) throws(CredentialError)
        -> (key: OpenSSLKey, certificate: OpenSSLCertificate, chain: [OpenSSLCertificate])
    {
        ERR_clear_error()
        var key: OpaquePointer?
        var cert: OpaquePointer?
        var stack: OpaquePointer?
        // PKCS12_parse checks the MAC itself (for an empty password it also tries "no password", which some
        // exporters write), so its 2,048 rounds of key derivation run once; a failure of that check is the
        // wrong-password error.
        let status = PKCS12_parse(raw, password, &key, &cert, &stack)
        if status != 1, pp_ERR_is_pkcs12_mac_failure(ERR_peek_last_error()) != 0 {
            ERR_clear_error()
            throw CredentialError(.wrongPassword, "wrong password or corrupt .p12 (mac verify failure)")
        }
        try check(status, "cannot decrypt .p12")
        let ownedKey = key.map(OpenSSLKey.init(owning:))
        let ownedCert = cert.map(OpenSSLCertificate.init(owning:))
        var chain: [OpenSSLCertificate] = []
        if let stack {
            for index in 0..<pp_sk_X509_num(stack) {
                if let extra = pp_sk_X509_value(stack, index), X509_up_ref(extra) == 1 {
                    chain.append(OpenSSLCertificate(owning: extra))
                }
            }
            pp_sk_X509_pop_free(stack)
        }
        guard let ownedKey else { throw CredentialError(.invalidInput, ".p12 holds no private key") }
        guard let ownedCert else { throw CredentialError(.invalidInput, ".p12 holds no certificate") }
        return (ownedKey, ownedCert, chain)
    }
}

// MARK: - TLS client identity

/// A client certificate (plus intermediates) and its private key, decoded once and handed to every TLS
/// connection as OpenSSL objects (``install(into:)``), so neither libcurl nor each of its handles keeps and
/// re-parses a PEM copy of the key.
///
/// `@unchecked Sendable`: immutable after `init`; OpenSSL only reads (and reference-counts) the `X509` and
/// `EVP_PKEY` objects it installs, which it allows from several threads at once.
final class OpenSSLIdentity: @unchecked Sendable {
    let key: OpenSSLKey
    let certificate: OpenSSLCertificate
    let chain: [OpenSSLCertificate]

    /// Throws `.invalidInput` when `key` is not the certificate's private key.
    init(key: OpenSSLKey, certificate: OpenSSLCertificate, chain: [OpenSSLCertificate]) throws(CredentialError) {
        guard certificate.matches(key) else {
            throw CredentialError(.invalidInput, ".p12 private key does not match its certificate")
        }
        self.key = key
        self.certificate = certificate
        self.chain = chain
    }

    /// Reads a PEM certificate file (the certificate, then any intermediates) and a PEM private key.
    convenience init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) throws(CredentialError) {
        ERR_clear_error()
        let certificates = try OpenSSLBIO(certificatePEM)
        var all: [OpenSSLCertificate] = []
        while let x509 = PEM_read_bio_X509(certificates.raw, nil, nil, nil) { all.append(OpenSSLCertificate(owning: x509)) }
        ERR_clear_error()  // the end of the file reads as "no start line"
        guard let first = all.first else { throw CredentialError(.invalidInput, "no PEM certificate") }
        let keyBIO = try OpenSSLBIO(privateKeyPEM)
        let key = OpenSSLKey(owning: try check(
            PEM_read_bio_PrivateKey(keyBIO.raw, nil, nil, nil), "not a PEM private key", code: .invalidInput))
        try self.init(key: key, certificate: first, chain: Array(all.dropFirst()))
    }

    /// Makes `sslContext` (an `SSL_CTX *`, as libcurl's `CURLOPT_SSL_CTX_FUNCTION` hands it over) present this
    /// identity. False (with OpenSSL's queue cleared) when OpenSSL refuses it.
    func install(into sslContext: UnsafeMutableRawPointer) -> Bool {
        let context = OpaquePointer(sslContext)
        defer { ERR_clear_error() }
        guard SSL_CTX_use_certificate(context, certificate.raw) == 1,
              SSL_CTX_use_PrivateKey(context, key.raw) == 1 else { return false }
        for extra in chain where pp_SSL_CTX_add1_chain_cert(context, extra.raw) != 1 { return false }
        return SSL_CTX_check_private_key(context) == 1
    }

    /// The certificate, then the intermediates, PEM.
    func certificatePEM() throws(CredentialError) -> [UInt8] {
        var pem = try certificate.pem()
        for extra in chain { pem += try extra.pem() }
        return pem
    }

    /// The private key as unencrypted PKCS#8 PEM, in memory.
    func privateKeyPEM() throws(CredentialError) -> [UInt8] { try key.privateKeyPEM() }
}

// MARK: - HMAC

/// HMAC-SHA256 of `data` under `key` (webhook signatures, users' `userAuth` proofs).
public func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length = 0
    let ok = key.withUnsafeBytes { k in
        data.withUnsafeBufferPointer { d in
            out.withUnsafeMutableBufferPointer { o in
                EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, k.baseAddress, k.count, d.baseAddress, d.count, o.baseAddress, 32, &length)
            }
        }
    }
    // EVP_Q_mac fails only without memory or a SHA-256 implementation, which no OpenSSL 3 build lacks.
    precondition(ok != nil && length == 32, "HMAC-SHA256 failed: \(drainOpenSSLErrors())")
    return out
}

// MARK: - HKDF

/// HKDF-SHA256 (RFC 5869) through OpenSSL's `EVP_KDF`: Web Push's four derivations per message (RFC 8291 §3.4,
/// RFC 8188 §2.2–2.3). Not swift-crypto's `HKDF`: on Linux it is generic Swift over its HMAC, a `SecureBytes`
/// allocation per step, and measured 22.8 µs of CPU for the four steps against OpenSSL's 10.3 in the same run
/// (`pushctl webpush bench-crypto`, bench/RESULTS.md "Web Push"; 17.7 against 7.7 in another) — issue 57's bar for another audited library ("the
/// same operations in half the time"). The key agreement and AES-GCM stay swift-crypto's (BoringSSL: OpenSSL's speed).
enum OpenSSLHKDF {
    /// RFC 5869's two halves, or both.
    enum Mode: Int32 {
        case extractAndExpand = 0  // EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND
        case extractOnly = 1  // EVP_KDF_HKDF_MODE_EXTRACT_ONLY: the output is the PRK, 32 bytes
        case expandOnly = 2  // EVP_KDF_HKDF_MODE_EXPAND_ONLY: the key is the PRK
    }

    /// The algorithm, fetched once (an `EVP_KDF` is immutable and shared by every thread; each derivation has a
    /// context of its own).
    private nonisolated(unsafe) static let kdf: OpaquePointer? = EVP_KDF_fetch(nil, "HKDF", nil)

    /// Contexts whose digest is set, lent to one derivation at a time. Why: setting the digest fetches SHA-256 by
    /// name, and a fresh context per step made that four fetches and four allocations per message; reused, the four
    /// steps measured 5.0 µs against 7.5 in C on this box (OpenSSL 3.0, whose HKDF cannot duplicate a context). A
    /// context keeps its last key, salt and info until set again: every derivation sets its key and mode, an extract
    /// its salt and an expand its info, and the one parameter a mode ignores is never read (RFC 5869's halves). An
    /// empty salt or info takes a fresh context: OpenSSL 3.0 keeps a previous salt when given an empty one, and 3.0.22
    /// crashes deriving on a reused context given an empty info (OpenSSLHKDFTests found it; Web Push has neither).
    private static let contexts = Mutex<[Context]>([])

    /// One `EVP_KDF_CTX` for HKDF-SHA256. `@unchecked Sendable`: ``contexts`` lends it to one thread at a time.
    private final class Context: @unchecked Sendable {
        let raw: OpaquePointer

        init() {
            var digest = [
                OSSL_PARAM_construct_utf8_string(OpenSSLHKDF.cString("digest"), OpenSSLHKDF.cString("SHA256"), 0),
                OSSL_PARAM_construct_end(),
            ]
            // Fails only without memory or a SHA-256 HKDF, which no OpenSSL 3 build lacks (as hmacSHA256 above).
            guard let raw = EVP_KDF_CTX_new(OpenSSLHKDF.kdf), EVP_KDF_CTX_set_params(raw, &digest) > 0 else {
                preconditionFailure("HKDF-SHA256 context: \(drainOpenSSLErrors())")
            }
            self.raw = raw
        }

        deinit { EVP_KDF_CTX_free(raw) }
    }

    /// Parameter names and the digest's, as C strings that live as long as the process (an `OSSL_PARAM` keeps the
    /// pointer until the derivation reads it).
    fileprivate static func cString(_ s: StaticString) -> UnsafeMutablePointer<CChar> {
        UnsafeMutablePointer(mutating: UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self))
    }

    /// `count` bytes derived from `key` (the input keying material, or the PRK when expanding only), `salt` (extract)
    /// and `info` (expand).
    static func derive(_ mode: Mode, key: [UInt8], salt: [UInt8] = [], info: [UInt8] = [], count: Int) -> [UInt8] {
        let pooled = (mode == .expandOnly || !salt.isEmpty) && (mode == .extractOnly || !info.isEmpty)
        let context = pooled ? (contexts.withLock { $0.popLast() } ?? Context()) : Context()
        defer { if pooled { contexts.withLock { $0.append(context) } } }
        var out = [UInt8](repeating: 0, count: count)
        var modeValue = mode.rawValue
        let ok = key.withUnsafeBytes { k in
            salt.withUnsafeBytes { s in
                info.withUnsafeBytes { i in
                    out.withUnsafeMutableBytes { o -> Bool in
                        var params = [
                            OSSL_PARAM_construct_octet_string(cString("key"), UnsafeMutableRawPointer(mutating: k.baseAddress), k.count),
                            OSSL_PARAM_construct_int(cString("mode"), &modeValue),
                        ]
                        if mode != .expandOnly {
                            params.append(OSSL_PARAM_construct_octet_string(cString("salt"), UnsafeMutableRawPointer(mutating: s.baseAddress), s.count))
                        }
                        if mode != .extractOnly {
                            params.append(OSSL_PARAM_construct_octet_string(cString("info"), UnsafeMutableRawPointer(mutating: i.baseAddress), i.count))
                        }
                        params.append(OSSL_PARAM_construct_end())
                        return EVP_KDF_derive(context.raw, o.baseAddress, o.count, &params) > 0
                    }
                }
            }
        }
        // It fails only without memory or a SHA-256 HKDF, which no OpenSSL 3 build lacks (as hmacSHA256 above).
        precondition(ok, "HKDF-SHA256 failed: \(drainOpenSSLErrors())")
        return out
    }
}
