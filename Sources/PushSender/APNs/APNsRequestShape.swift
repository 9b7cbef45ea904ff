import PushCore

/// A service's shaping of the requests a ``Transport`` sends for jobs that come without a prepared request, on the
/// transport's thread (where it may keep what requests share). The transport itself knows no service.
protocol RequestShape: AnyObject {
    /// The service's id headers, if its requests carry one of their own.
    var idHeaders: IdHeaders? { get }
    /// Arms `handle` for `job`'s request.
    func prepare(_ handle: EasyHandle, _ job: TransferJob) throws(TransportError)
}

/// APNs' requests: `POST /3/device/<token>` with the `apns-*` headers, the header lists shared by the requests that
/// have them in common (a broadcast's all do) built once; used on one transport's thread only.
final class APNsRequestShape: RequestShape {
    /// `https://host:port/3/device/`.
    private let urlPrefix: String

    init(target: SenderTarget) { urlPrefix = target.description + "/3/device/" }

    /// `apns-id` on each request, echoed in the answer; `apns-unique-id` in the development environment's answers.
    let idHeaders: IdHeaders? = IdHeaders(request: "apns-id: ", answer: "apns-id:", unique: "apns-unique-id:")

    func prepare(_ handle: EasyHandle, _ job: TransferJob) throws(TransportError) {
        let request = job.item.request
        try handle.prepare(
            urlPrefix: urlPrefix, path: request.token.hex, id: request.notificationId,
            headers: sharedHeaders(request, job.authorization), body: request.payload)
    }

    /// What the headers of a request other than its apns-id depend on.
    private struct HeaderKey: Hashable {
        var pushType: String
        var priority: Int
        var topic: String
        var expiration: Int64?
        var collapseId: String?
        var authorization: String?

        init(_ request: NotificationRequest, _ authorization: String?) {
            pushType = request.pushType.rawValue
            priority = Int(request.priority.rawValue)
            topic = request.topic
            expiration = request.expiration
            collapseId = request.collapseId
            self.authorization = authorization
        }

        /// Whether `request` has these headers, read in place: a key built per request to compare copied its
        /// strings in and out (~12 reference-count operations per notification, callgrind).
        func matches(_ request: NotificationRequest, _ authorization: String?) -> Bool {
            topic == request.topic && priority == Int(request.priority.rawValue) && expiration == request.expiration
                && collapseId == request.collapseId && self.authorization == authorization
                && pushType == request.pushType.rawValue
        }
    }

    /// Header lists shared by the requests that have them in common (a broadcast's all do), built once; used on
    /// the transport thread only. Handles keep the list of their current request alive, so the cache may drop
    /// its lists at any time: it starts over past 32 of them (tokens rotate, send jobs differ).
    private var headerCache: [HeaderKey: HeaderList] = [:]
    /// The last list handed out and its key: consecutive requests of a broadcast share it, and comparing their
    /// strings (the same storage, so one pointer compare each) costs less than hashing them for the cache.
    private var lastKey: HeaderKey?
    private var lastList: HeaderList?

    private func sharedHeaders(_ request: NotificationRequest, _ authorization: String?) -> HeaderList {
        if let lastList, lastKey?.matches(request, authorization) == true { return lastList }
        let key = HeaderKey(request, authorization)
        if let cached = headerCache[key] {
            lastKey = key
            lastList = cached
            return cached
        }
        let headers = HeaderList()
        headers.append("apns-push-type: " + key.pushType)
        headers.append("apns-priority: " + String(key.priority))
        headers.append("apns-topic: " + key.topic)
        if let expiration = key.expiration { headers.append("apns-expiration: " + String(expiration)) }
        if let collapseId = key.collapseId { headers.append("apns-collapse-id: " + collapseId) }
        if let authorization { headers.append("authorization: " + authorization) }
        headers.append("content-type: application/json")
        headers.append("Expect:")
        if headerCache.count >= 32 { headerCache.removeAll(keepingCapacity: true) }
        headerCache[key] = headers
        lastKey = key
        lastList = headers
        return headers
    }
}
