import HTTPServer

/// The one route table of the service. The router and `/openapi.json` are both built from it.
/// Sections: operations, identity (sessions), cases, accounts, customers. Keep each section's
/// routes together and add the controller it needs to `init`.
struct Routes {
    let operations: OperationsController

    init(context: ServiceContext, operations: OperationsController) {
        self.operations = operations
    }

    var all: [APIRoute] {
        operationsRoutes
    }

    // MARK: Operations
    var operationsRoutes: [APIRoute] {
        [
            APIRoute(.GET, "/healthz", operationID: "health", summary: "The process is alive.", tag: "operations",
                     responses: [200: .json("Alive.", "Health")],
                     handler: operations.health),
            APIRoute(.GET, "/readyz", operationID: "readiness", summary: "The database is reachable and migrated to this build's schema.", tag: "operations",
                     responses: [200: .json("Ready to serve.", "Ready"), 503: .problem("Database unreachable or not migrated; see Retry-After.")],
                     handler: operations.ready),
            APIRoute(.GET, "/metrics", operationID: "metrics", summary: "Prometheus metrics.", tag: "operations",
                     responses: [200: .other("Prometheus text exposition format 0.0.4.", mediaType: "text/plain")],
                     handler: operations.prometheus),
            APIRoute(.GET, "/openapi.json", operationID: "openapi", summary: "This document.", tag: "operations",
                     responses: [200: .other("OpenAPI 3.1 document.", mediaType: "application/json")],
                     handler: operations.openAPI),
        ]
    }
}
