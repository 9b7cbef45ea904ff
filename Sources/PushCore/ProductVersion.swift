/// PushProvider's version: the one place it is written. `pushctl --version` prints it, `make deb` and `make dist`
/// name their packages after what the built binary prints, and a test holds `docs/openapi.yaml`'s `info.version`
/// equal to it, so the binary, the packages and the API description cannot disagree.
public enum ProductVersion {
    /// The semantic version (MAJOR.MINOR.PATCH): MAJOR changes when the HTTP API, the configuration file or a
    /// command changes incompatibly.
    public static let semantic = "1.0.0"
}
