/// FCM HTTP v1's error body, the parts an answer rule reads. FCM answers a refused send with Google's standard error
/// object (https://firebase.google.com/docs/cloud-messaging/error-codes):
///
///     {"error": {"code": 400, "message": "…", "status": "INVALID_ARGUMENT",
///                "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
///                            {"@type": "type.googleapis.com/google.rpc.BadRequest",
///                             "fieldViolations": [{"field": "message.token", "description": "…"}]}]}}
///
/// `status` is the canonical gRPC code (NOT_FOUND, UNAUTHENTICATED, …); FCM's own code, the one Firebase documents
/// (https://firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode), is the `FcmError` detail's `errorCode`
/// (firebase-admin-node #218: "the error codes … are embedded in the details section"). Parsing is lenient: a body
/// that is not JSON (a proxy's HTML 502 page) or lacks a part leaves that part nil, and the rule falls back to the
/// HTTP status.
public struct FCMError: Sendable, Equatable {
    /// The `@type` of the detail that carries FCM's own error code.
    public static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    /// The `@type` of the detail that names the request's invalid fields.
    public static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// `error.status`: the canonical code, e.g. `INVALID_ARGUMENT`, `NOT_FOUND`, `UNAUTHENTICATED`.
    public var status: String?
    /// `error.message`, as FCM wrote it.
    public var message: String?
    /// The `FcmError` detail's `errorCode`, e.g. `UNREGISTERED`, `SENDER_ID_MISMATCH`.
    public var errorCode: String?
    /// Every `BadRequest` detail's `fieldViolations[].field`, in order, e.g. `message.token`, `message.data[0].value`.
    public var fieldViolations: [String]

    /// Creates an error from its parts.
    public init(status: String? = nil, message: String? = nil, errorCode: String? = nil, fieldViolations: [String] = []) {
        self.status = status
        self.message = message
        self.errorCode = errorCode
        self.fieldViolations = fieldViolations
    }

    /// Parses a response body. Anything that is not FCM's error object gives an error with every part empty.
    public init(body: some Collection<UInt8>) {
        self.init()
        guard let root = try? JSONValue(parsing: body), let error = root["error"] else { return }
        status = error["status"]?.stringValue
        message = error["message"]?.stringValue
        for detail in error["details"]?.arrayValue ?? [] {
            switch detail["@type"]?.stringValue {
            case Self.fcmErrorType?:
                if errorCode == nil { errorCode = detail["errorCode"]?.stringValue }
            case Self.badRequestType?:
                for violation in detail["fieldViolations"]?.arrayValue ?? [] {
                    if let field = violation["field"]?.stringValue { fieldViolations.append(field) }
                }
            default:
                continue
            }
        }
    }
}
