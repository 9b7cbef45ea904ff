import PushCore

/// Opens the registry a configuration names: a SQLite file, or a PostgreSQL database for a `postgres://` URL.
public enum RegistryStores {
    /// Opens (and migrates) `configuration.database`. `options` apply to SQLite; `connections` sizes the
    /// PostgreSQL pool (per process).
    public static func open(
        _ configuration: PushConfiguration, options: RegistryOptions = .init(), connections: Int = 4
    ) throws(StoreError) -> any RegistryStore {
        if PushConfiguration.isPostgresURL(configuration.database) {
            return try PostgresRegistry.open(
                url: configuration.database, passwordFile: configuration.databasePasswordFile,
                passwordEnv: configuration.databasePasswordEnv, connections: connections)
        }
        return try SQLiteRegistry(path: configuration.database, options: options)
    }
}
