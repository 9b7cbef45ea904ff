import Foundation

/// How one endpoint's HTTP/2 connections (`apps.ID.connections`) are spread over transport threads: each
/// ``Transport`` is one libcurl loop on its own thread, and one loop may carry several connections of the endpoint.
///
/// Why not always one thread per connection: a loop's cost is paid per wake-up, and one loop carrying two
/// connections serves the answers of both in each wake-up. At 100 ms with 2 × 1,000 in flight on 2 cores, one loop
/// for both connections cost 10% less CPU per notification than a loop each (bench/RESULTS.md, "One loop per
/// endpoint"). Why not always one loop per endpoint: one loop is one thread, and a loop near its limit keeps a core
/// busy; with many connections on a big machine (4 × 1,000 in flight at 100 ms is 40,000/s) one thread would cap
/// the rate. So an endpoint gets a loop per two cores (the engine, the store and the simulator or the kernel's
/// network stack need the others), at most one per connection, and the count divides the connections so every
/// loop carries as many (notifications go to the loops in turn).
struct TransportLoops: Sendable, Equatable {
    /// Loops (threads) for the endpoint.
    let loops: Int
    /// Connections each loop carries.
    let connectionsPerLoop: Int

    /// `loops`, when given, overrides the core rule (tests; it is still cut to divide `connections`).
    init(connections: Int, cores: Int, loops wanted: Int? = nil) {
        let connections = max(1, connections)
        let limit = min(connections, max(1, wanted ?? cores / 2))
        var loops = limit
        while connections % loops != 0 { loops -= 1 }
        self.loops = loops
        connectionsPerLoop = connections / loops
    }

    /// The plan for `configuration` on this machine.
    init(_ configuration: SenderConfiguration, cores: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.init(connections: configuration.connections, cores: cores, loops: configuration.transportLoops)
    }
}
