/// A first-in first-out queue over an array with a moving head: O(1) amortized append and removal, storage kept
/// for reuse (the transport thread's queues see thousands of elements per second and are emptied often; a
/// ``BlockingLane``'s calls wait in one too). Not synchronised: its owner guards it.
public struct FIFO<Element> {
    /// An empty queue.
    public init() {}

    private var elements: [Element] = []
    private var head = 0

    public var isEmpty: Bool { head == elements.count }
    public var count: Int { elements.count - head }
    /// The oldest element, if any.
    public var first: Element? { head < elements.count ? elements[head] : nil }

    public mutating func append(_ element: Element) { elements.append(element) }

    public mutating func append(contentsOf batch: [Element]) { elements.append(contentsOf: batch) }

    /// Removes and returns the oldest element.
    @discardableResult
    public mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes and returns every element, oldest first.
    public mutating func removeAll() -> ArraySlice<Element> {
        let all = elements[head...]
        elements.removeAll(keepingCapacity: true)
        head = 0
        return all
    }
}
