/// A storage failure as the delivery engine sees it: the store's own error (``StoreError``), on which the engine
/// branches by ``StoreError/kind``: ``StoreError/Kind/unavailable`` waits and retries, ``StoreError/Kind/leaseLost``
/// stops the claim and writes nothing, anything else stops the run.
public typealias DeliveryStoreError = StoreError
