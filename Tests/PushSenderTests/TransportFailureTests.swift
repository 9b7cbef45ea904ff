import PushCore
import CCurl
import Testing
@testable import PushSender

/// How a transfer that ended without an answer is judged: a refusal stops the endpoint (the run is interrupted),
/// anything else is an outage or a dropped connection the sender retries.
@Suite struct TransportFailureTests {
    @Test func aTLSWriteOrReadErrorIsTheConnectionDyingNotARefusal() {
        // Seen when the simulator restarted mid-run (libcurl 7.88): the server vanished during SSL_write.
        let write = TransportError(
            code: Int(CURLE_SSL_CONNECT_ERROR.rawValue),
            message: "SSL_write() error: error:0A00007F:SSL routines::bad write retry; the server's certificate does not verify against the trusted CAs (unspecified certificate verification error)")
        #expect(write.failure(sent: true) == .dropped)
        #expect(write.failure(sent: false) == .unreachable)
        let read = TransportError(code: Int(CURLE_RECV_ERROR.rawValue), message: "SSL_read() error: error:0A000126:SSL routines::unexpected eof while reading")
        #expect(read.failure(sent: true) == .dropped)
    }

    @Test func aHandshakeThatFailsVerificationOrAnAlertIsStillARefusal() {
        let untrusted = TransportError(
            code: Int(CURLE_SSL_CONNECT_ERROR.rawValue), message: "error:0A000086:SSL routines::certificate verify failed")
        #expect(untrusted.failure(sent: false) == .refused)
        let alert = TransportError(
            code: Int(CURLE_RECV_ERROR.rawValue), message: "SSL_read() error: error:0A00045C:SSL routines::tlsv13 alert certificate required")
        #expect(alert.failure(sent: true) == .refused)
        #expect(TransportError(code: Int(CURLE_PEER_FAILED_VERIFICATION.rawValue), message: "x").failure(sent: false) == .refused)
    }
}
