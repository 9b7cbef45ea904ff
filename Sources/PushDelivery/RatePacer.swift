import PushCore

/// Paces one pass of a claim by its broadcast's stored rate (`--rate`), which every process working on the
/// broadcast shares: notifications are reserved against the store's schedule a few at a time
/// (``Pacer/chunk(perSecond:)``), and the pass waits as long as the store says before handing them out. So the
/// rate holds for the whole broadcast however many workers and shards there are, and a rate stored while a pass
/// runs takes effect within a thousand devices.
final class RatePacer {
    /// Devices handed out between two looks at a broadcast that had no rate.
    static let recheckEvery = 1000

    private let id: String
    private let access: StoreAccess
    private let sleeper: Sleeper
    /// Reserved and not yet handed out.
    private var granted = 0
    /// Devices still to hand out before looking at the rate again, while the broadcast has none.
    private var unpaced = 0
    /// How many to reserve next (one until the rate is known).
    private var chunk = 1

    init(id: String, access: StoreAccess, sleeper: Sleeper) {
        self.id = id
        self.access = access
        self.sleeper = sleeper
    }

    /// Admits the next device if it needs no look at the store (reserved already, or the broadcast had no rate):
    /// the feed tries this before the `async` ``admit()``, whose call costs a task frame per device.
    func tryAdmit() -> Bool {
        if granted > 0 {
            granted -= 1
            return true
        }
        if unpaced > 0 {
            unpaced -= 1
            return true
        }
        return false
    }

    /// Returns when the next device may be sent.
    func admit() async throws(DeliveryStoreError) {
        if tryAdmit() { return }
        let (id, count) = (id, chunk)
        let reservation = try await access.run("reserving notifications under the broadcast's rate") { store throws(DeliveryStoreError) in
            try store.reserveSends(id: id, count: count)
        }
        guard let reservation else {
            unpaced = Self.recheckEvery - 1
            return
        }
        granted = count - 1
        chunk = Pacer.chunk(perSecond: reservation.perSecond)
        if reservation.waitMs > 0 { await sleeper.sleep(milliseconds: Int(reservation.waitMs.rounded(.up))) }
    }

    /// Gives back what was reserved and not sent (the pass ended), so the broadcast's other processes may use it.
    func finish() async {
        guard granted > 0 else { return }
        let (id, count) = (id, -granted)
        granted = 0
        _ = try? await access.run("giving back unsent notifications under the broadcast's rate", retry: false) {
            store throws(DeliveryStoreError) in try store.reserveSends(id: id, count: count)
        }
    }
}
