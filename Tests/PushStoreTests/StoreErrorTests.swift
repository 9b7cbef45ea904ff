import Foundation
import PushCore
import Testing
import TestSupport

@testable import PushStore

/// `StoreError` keeps the database's own code (SQLite's result and extended code, PostgreSQL's SQLSTATE) beside the
/// backend-neutral kind callers branch on.
@Suite struct StoreErrorTests {
    @Test(arguments: Backend.allCases) func aDuplicateIdIsAConstraintCarryingTheBackendsOwnCode(_ backend: Backend) throws {
        let registry = try backend.open()
        let record = BroadcastRecord(id: "dup", app: "a", payload: Array("{}".utf8), pushType: .background, priority: .conserve)
        try registry.createBroadcast(record, tokens: nil)
        let error = try #require(throws: StoreError.self) { try registry.createBroadcast(record, tokens: nil) }
        #expect(error.kind == .constraint)
        switch (backend, error.backendCode) {
        case (.sqlite, .sqlite(let result, let extended)?):
            #expect(result == 19, "SQLITE_CONSTRAINT")
            #expect(extended & 0xff == 19 && extended != 19, "an extended constraint code, got \(extended)")
        case (.postgres, .postgres(let state)?):
            #expect(state == "23505", "unique_violation")
        default:
            Issue.record("\(backend): \(String(describing: error.backendCode))")
        }
    }

    @Test func aWriteLockHeldByAnotherConnectionIsBusyWithSQLitesCodes() throws {
        let path = makeTempDirectory() + "/registry.sqlite"
        let registry = try SQLiteRegistry(path: path, options: RegistryOptions(busyTimeoutMs: 100))
        let other = try SQLiteRegistry(path: path)
        let error = try other.write { (_) throws(StoreError) -> StoreError? in
            do throws(StoreError) {
                try registry.register(app: "a", token: testToken(1), oldToken: nil, channels: nil, environment: nil)
                return nil
            } catch {
                return error
            }
        }
        let busy = try #require(error)
        #expect(busy.code == .busy && busy.kind == .unavailable && busy.isUnavailable)
        #expect(busy.backendCode == .sqlite(result: 5, extended: 5), "SQLITE_BUSY")
        #expect(try registry.device(app: "a", token: testToken(1)) == nil, "nothing was written")
    }

    @Test func aRefusedPostgreSQLConnectionIsUnavailableWithoutASQLSTATE() throws {
        let port = try PostgresTestServer.freePort()
        let error = try #require(throws: StoreError.self) {
            _ = try PostgresRegistry(url: PostgresURL(parsing: "postgres://u@127.0.0.1:\(port)/db"), password: nil)
        }
        #expect(error.kind == .unavailable && error.backendCode == nil)
    }

    @Test func sqlStatesMapToTheKindsCallersBranchOn() {
        let kinds: [(String, StoreError.Kind)] = [
            ("40001", .unavailable), ("40P01", .unavailable), ("55P03", .unavailable), ("57014", .unavailable),
            ("57P01", .unavailable), ("08006", .unavailable), ("53300", .unavailable), ("28P01", .unavailable),
            ("23505", .constraint), ("22P02", .invalidInput), ("23502", .invalidInput), ("XX001", .corrupt),
            ("42P01", .other),
        ]
        for (state, kind) in kinds {
            #expect(StoreError(PostgresSession.code(sqlstate: state), "x").kind == kind, "SQLSTATE \(state)")
        }
    }
}
