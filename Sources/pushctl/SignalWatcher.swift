import Dispatch
import Foundation

/// Turns SIGINT/SIGTERM into a callback (a broadcast then drains and checkpoints).
final class SignalWatcher: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
    }
}
