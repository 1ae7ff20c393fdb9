import HTTPServer
import Postgres
import Testing

@testable import ReclaimAPI

/// The one SQLSTATE → HTTP table.
@Suite struct ProblemMappingTests {
    func mapped(_ sqlState: String?, kind: PostgresError.Kind = .server) -> (any HTTPProblem)? {
        ProblemMapping.database(PostgresError(kind, sqlState: sqlState, message: "secret row value 4242"))
    }

    @Test(arguments: [
        ("23505", 409, "conflict"), ("23503", 409, "conflict"), ("23514", 422, "validation_failed"),
        ("23502", 422, "validation_failed"), ("42501", 403, "forbidden"), ("40001", 503, "database_busy"),
        ("40P01", 503, "database_busy"), ("57014", 503, "database_timeout"), ("08006", 503, "database_unavailable"),
        ("57P01", 503, "database_unavailable"), ("53300", 503, "database_overloaded"),
    ])
    func sqlStates(sqlState: String, status: Int, code: String) throws {
        let problem = try #require(mapped(sqlState))
        #expect(problem.status == status)
        #expect(problem.code == code)
        #expect(!(problem.detail ?? "").contains("4242"), "row data never reaches the client")
        if status == 503 {
            #expect(problem.extraHeaders.contains { $0.0 == "Retry-After" })
        }
    }

    @Test func connectionLossIs503WithRetryAfter() throws {
        for kind in [PostgresError.Kind.connectionFailed, .connectionLost] {
            let problem = try #require(mapped(nil, kind: kind))
            #expect(problem.status == 503)
            #expect(problem.code == "database_unavailable")
            #expect(problem.extraHeaders.contains { $0.0 == "Retry-After" && $0.1 == "5" })
        }
    }

    @Test func unknownFailuresAreLeftToThePlain500() {
        #expect(mapped("42P01") == nil)
        #expect(ProblemMapping.database(CancellationError()) == nil)
    }
}
