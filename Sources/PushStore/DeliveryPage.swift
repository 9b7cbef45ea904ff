import PushCore

/// One page of the delivery log (see ``DeliveryQuery``): rows newest first, each with its kind and its
/// broadcast or send job, and where the next page starts.
public struct DeliveryPage: Sendable, Equatable {
    /// The rows, newest first.
    public var records: [DeliveryRecord]
    /// The position after the last row when more rows may follow; nil on the last page.
    public var next: DeliveryCursor?

    /// Creates a page.
    public init(records: [DeliveryRecord], next: DeliveryCursor?) {
        self.records = records
        self.next = next
    }
}
