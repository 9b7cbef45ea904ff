import CCurl
import Glibc
import PushCore
import PushLanes

/// A NUL-terminated line of our own that libcurl reads while a request is armed (or copies when it is set),
/// rewritten per request without allocating: it grows only when a longer line comes.
final class CLine {
    private(set) var pointer: UnsafeMutablePointer<CChar>
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        pointer = .allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
    }

    deinit { pointer.deallocate() }

    /// Makes the line `head` followed by `tail` (``pointer`` changes when it grows).
    func set(_ head: UnsafeRawBufferPointer, _ tail: UnsafeBufferPointer<UInt8>) {
        let n = head.count + tail.count
        if n + 1 > capacity {
            pointer.deallocate()
            capacity = n + 1
            pointer = .allocate(capacity: capacity)
        }
        let out = UnsafeMutableRawPointer(pointer)
        if let base = head.baseAddress { out.copyMemory(from: base, byteCount: head.count) }
        if let base = tail.baseAddress { (out + head.count).copyMemory(from: base, byteCount: tail.count) }
        pointer[n] = 0
    }
}

/// A `curl_slist` of request headers, freed when the last request using it is done. Appended to only while it is
/// built, before any request or other thread sees it (then libcurl only reads it).
final class HeaderList: @unchecked Sendable {
    private(set) var raw: UnsafeMutablePointer<curl_slist>?

    init(capacityHint: Int = 0) {}

    /// Appends `name: value`.
    func append(_ line: String) {
        if let next = curl_slist_append(raw, line) { raw = next }
    }

    deinit { curl_slist_free_all(raw) }
}
