import Hummingbird
import PushCore
import PushStore

extension PushServer {
    func addDeliveryRoutes(to router: Router<BasicRequestContext>) {
        router.get("/v1/apps/:app/deliveries") { request, context in
            try await self.deliveryHistory(request, app: try context.parameters.require("app"))
        }
    }

    /// `GET /v1/apps/{app}/deliveries?token=&broadcast=&since=&status=&limit=&cursor=` (send keys only): the
    /// delivery log newest first, `{"deliveries": […], "nextCursor": "…" | null}`. A bad parameter is 400
    /// `invalid_<parameter>`.
    func deliveryHistory(_ request: Request, app: String) async throws -> Response {
        _ = try authorize(request, app: app, need: .send)
        let q = request.uri.queryParameters
        // A token's spaces (the `<740f4707 …>` form) arrive as '+' from form-encoding clients; a token has no '+'.
        let token = q.get("token").map { $0.replacingOccurrences(of: "+", with: " ") }
        let query: DeliveryQuery
        do {
            query = try DeliveryQuery.parse(
                app: app, token: token, broadcast: q.get("broadcast"), since: q.get("since"), status: q.get("status"),
                limit: q.get("limit"), cursor: q.get("cursor"))
        } catch {
            throw APIError.badRequest(error.parameter, error.message)
        }
        let page = try await registry.run { try $0.deliveries(query) }
        return JSONResponse.make(.ok, .object([
            ("deliveries", .array(page.records.map(\.historyJSON))),
            ("nextCursor", page.next.map { .string($0.encoded) } ?? .null),
        ]))
    }
}
