import Synchronization

/// Live figures of one sender for `/metrics`: notifications in flight, the service's answers and how long they took,
/// TCP connections opened (and reopened). Updated on the transport threads with atomics (the latency histogram
/// under a small lock), read at scrape time.
public final class SenderMetrics: Sendable {
    /// Upper bounds of the latency histogram's buckets, in milliseconds (`+Inf` is implied).
    public static let latencyBucketsMs: [Int64] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]

    /// A histogram snapshot: cumulative counts per bucket (the last one is `+Inf`), the sum and the count.
    public struct Latency: Sendable, Equatable {
        /// Answers at or under each of ``SenderMetrics/latencyBucketsMs``, then all of them.
        public var cumulative: [Int]
        /// The sum of the observed latencies, in seconds.
        public var sumSeconds: Double
        /// Answers observed.
        public var count: Int
    }

    private let inFlightCount = Atomic<Int>(0)
    private let opened = Atomic<Int>(0)
    private let reopened = Atomic<Int>(0)
    private let histogram = Mutex((buckets: [Int](repeating: 0, count: SenderMetrics.latencyBucketsMs.count + 1), sumNs: UInt64(0), count: 0))

    /// Creates empty figures.
    public init() {}

    /// Notifications handed to the sender whose result has not been handed back yet (retries and parked ones
    /// included).
    public var inFlight: Int { inFlightCount.load(ordering: .relaxed) }
    /// TCP connections opened to the service (each transport's first one included).
    public var connectionsOpened: Int { opened.load(ordering: .relaxed) }
    /// Connections opened after a transport's first one: reconnects after a drop, a GOAWAY or an outage.
    public var reconnects: Int { reopened.load(ordering: .relaxed) }

    /// The latency histogram so far.
    public var latency: Latency {
        histogram.withLock { h in
            var running = 0
            let cumulative = h.buckets.map { n -> Int in
                running += n
                return running
            }
            return Latency(cumulative: cumulative, sumSeconds: Double(h.sumNs) / 1e9, count: h.count)
        }
    }

    package func submitted() { inFlightCount.add(1, ordering: .relaxed) }
    package func finished() { inFlightCount.subtract(1, ordering: .relaxed) }

    /// One answer of the service, `nanoseconds` after its attempt was handed to the transport.
    package func answered(afterNanoseconds nanoseconds: UInt64) {
        let index = Self.latencyBucketsMs.firstIndex { nanoseconds <= UInt64($0) * 1_000_000 } ?? Self.latencyBucketsMs.count
        histogram.withLock { h in
            h.buckets[index] += 1
            h.sumNs &+= nanoseconds
            h.count += 1
        }
    }

    /// A connection opened; `first` when it is its transport's first.
    package func connectionOpened(first: Bool) {
        opened.add(1, ordering: .relaxed)
        if !first { reopened.add(1, ordering: .relaxed) }
    }
}
