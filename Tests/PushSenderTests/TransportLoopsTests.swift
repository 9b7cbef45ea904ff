import Testing

@testable import PushSender

/// `TransportLoops`: how an endpoint's connections are spread over curl loop threads.
@Suite struct TransportLoopsTests {
    @Test func twoCoresPutEveryConnectionOfAnEndpointOnOneLoop() {
        for connections in 1...16 {
            let plan = TransportLoops(connections: connections, cores: 2)
            #expect(plan == TransportLoops(connections: connections, cores: 1, loops: 1))
            #expect(plan.loops == 1 && plan.connectionsPerLoop == connections)
        }
    }

    @Test func aLoopPerTwoCoresAtMostOnePerConnectionAndAlwaysAnEqualShare() {
        #expect(TransportLoops(connections: 4, cores: 8) == TransportLoops(connections: 4, cores: 1, loops: 4))
        #expect(TransportLoops(connections: 4, cores: 8).connectionsPerLoop == 1)
        #expect(TransportLoops(connections: 2, cores: 64).loops == 2, "never more loops than connections")
        #expect(TransportLoops(connections: 8, cores: 4).loops == 2)
        #expect(TransportLoops(connections: 8, cores: 4).connectionsPerLoop == 4)
        // 6 connections, room for 4 loops: 3 loops of 2 (4 would leave two loops with one connection and two with
        // two, while notifications go to the loops in turn).
        #expect(TransportLoops(connections: 6, cores: 8).loops == 3)
        #expect(TransportLoops(connections: 6, cores: 8).connectionsPerLoop == 2)
        #expect(TransportLoops(connections: 7, cores: 8).loops == 1, "a prime count beyond the room: one loop for all")
        for connections in 1...16 {
            for cores in 1...32 {
                let plan = TransportLoops(connections: connections, cores: cores)
                #expect(plan.loops * plan.connectionsPerLoop == connections)
                #expect(plan.loops <= max(1, cores / 2))
            }
        }
    }

    @Test func theConfigurationsLoopCountOverridesTheCoresButStillDividesTheConnections() {
        var configuration = SenderConfiguration(connections: 4)
        configuration.transportLoops = 2
        #expect(TransportLoops(configuration, cores: 2) == TransportLoops(connections: 4, cores: 4))
        configuration.transportLoops = 3
        #expect(TransportLoops(configuration, cores: 64).loops == 2)
        configuration.transportLoops = 0
        #expect(TransportLoops(configuration, cores: 64).loops == 1)
    }
}
