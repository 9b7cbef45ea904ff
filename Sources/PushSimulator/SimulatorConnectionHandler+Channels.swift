import NIOCore
import NIOHPACK
import NIOHTTP2
import PushCore

extension SimulatorConnectionHandler {
    /// Answers one channel-management or broadcast request (see ``ChannelRequestValidator``). Same listener,
    /// same TLS and credentials as device sends; the status faults (429/503/500 fractions) apply too, and the 502
    /// of a front end (``SimulatorFaults/badGatewayFraction``).
    func processChannel(context: ChannelHandlerContext, id: HTTP2StreamID, head: RequestValidator.Head, body: [UInt8]) {
        let faults = core.faults
        // Echo the request's apns-request-id unless that is what is wrong with it.
        let given = head.requestId.flatMap { NotificationID.isValid($0) ? $0 : nil }
        let requestId = given ?? rng.uuid()
        if rng.chance(faults.badGatewayFraction) {
            core.recorder.answered(status: 502, reason: nil, accepted: nil)
            writeChannelResponse(context: context, id: id, status: 502, requestId: requestId, headers: [], json: nil)
            return
        }
        let outcome: ChannelStore.Outcome
        if rng.chance(faults.tooManyRequestsFraction) {
            outcome = .reject(.tooManyRequests)
        } else if rng.chance(faults.serviceUnavailableFraction) {
            outcome = .reject(.serviceUnavailable)
        } else if rng.chance(faults.internalServerErrorFraction) {
            outcome = .reject(.internalServerError)
        } else {
            let now = core.now()
            let client = self.client(context: context, head: head, nowMs: now)
            switch core.channelValidator.validate(head: head, body: body, client: client) {
            case .failure(let reason): outcome = .reject(reason.reason)
            case .success(let operation): outcome = core.channels.apply(operation) { Self.newChannelId(&self.rng) }
            }
        }

        var headers: [(String, String)] = []
        var payload: [UInt8]? = nil
        let status: Int
        switch outcome {
        case .created(let channelId):
            status = 201
            headers.append(("apns-channel-id", channelId))
            core.recorder.answered(status: status, reason: nil, accepted: nil)
        case .info(let policy):
            status = 200
            payload = Array(#"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#.utf8)
            core.recorder.answered(status: status, reason: nil, accepted: nil)
        case .list(let ids):
            status = 200
            payload = JSONValue.object([("channels", .array(ids.map { .string($0) }))]).encoded
            core.recorder.answered(status: status, reason: nil, accepted: nil)
        case .deleted:
            status = 204
            core.recorder.answered(status: status, reason: nil, accepted: nil)
        case .broadcast(let broadcast):
            status = 200
            let unique = rng.uuid()
            headers.append(("apns-unique-id", unique))
            let request = NotificationRequest(
                token: DeviceToken(trustedCanonicalHex: ""), topic: broadcast.bundleId, pushType: .liveactivity,
                priority: broadcast.priority, expiration: broadcast.expiration, notificationId: requestId,
                payload: broadcast.payload)
            core.recorder.answered(
                status: status, reason: nil,
                accepted: ReceivedNotification(
                    request: request, uniqueId: unique, apnsIdGenerated: given == nil, receivedAtMs: core.now(),
                    channelId: broadcast.channelId, clientCertificateSHA256: clientCertificateSHA256))
        case .reject(let reason):
            status = reason.status
            payload = Array((#"{"reason":"# + JSONValue.string(reason.rawValue).encodedString + "}").utf8)
            core.recorder.answered(status: status, reason: reason, accepted: nil)
        }
        writeChannelResponse(context: context, id: id, status: status, requestId: requestId, headers: headers, json: payload)
    }

    /// A channel id: base64 of 16 random bytes.
    static func newChannelId(_ rng: inout FastRandom) -> String {
        let a = rng.next(), b = rng.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        return base64(bytes)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(table[Int(b0 >> 2)])
            out.append(table[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? table[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? table[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Writes a channel answer: `apns-request-id`, extra headers, and a JSON body when there is one.
    func writeChannelResponse(
        context: ChannelHandlerContext, id: HTTP2StreamID, status: Int, requestId: String,
        headers extra: [(String, String)], json: [UInt8]?
    ) {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: Self.statusText(status))
        headers.add(name: "apns-request-id", value: requestId, indexing: .nonIndexable)
        for (name, value) in extra { headers.add(name: name, value: value, indexing: .nonIndexable) }
        needsFlush = true
        guard let json else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
            answersNotFlushed += 1
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: json.count)
        buffer.writeBytes(json)
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(json.count))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers)))), promise: nil)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))),
            promise: nil)
        answersNotFlushed += 1
    }
}
