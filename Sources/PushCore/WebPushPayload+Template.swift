extension WebPushPayload {
    /// One notification mapped once for all its devices: the message with its id left open.
    ///
    /// Why: a broadcast sends one notification (or one per locale) to every device, and only the id each message
    /// carries differs. ``map(apnsPayload:pushType:id:collapseId:declarative:)`` parses the APNs payload and encodes
    /// the message, ~5 µs and a dozen allocations per device on this box (issue 57's Web Push profile); a template
    /// does that once and splices each id into the bytes.
    ///
    /// How, without depending on the encoder's layout: the message is mapped once with a marker id, and split around
    /// the marker's encoded bytes. A JSON string's encoding does not depend on where it stands, so `message(id:)` is
    /// byte for byte what `map` gives for that id (WebPushPayloadTemplateTests holds both forms to it).
    public struct Template: Sendable, Equatable {
        /// The message before the id's encoded string (its opening quote excluded) and after it.
        let prefix: [UInt8]
        let suffix: [UInt8]

        /// The message for one device: `map`'s bytes for this id.
        public func message(id: String) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(prefix.count + suffix.count + JSONValue.encodedLength(of: id))
            out.append(contentsOf: prefix)
            JSONValue.encodeString(id, into: &out)
            out.append(contentsOf: suffix)
            return out
        }
    }

    /// ``Mapping`` with the id left open.
    public enum TemplateMapping: Sendable, Equatable {
        case send(Template)
        case skip(String)
    }

    /// The template of one notification (``map(apnsPayload:pushType:id:collapseId:declarative:)`` for every id).
    public static func template(
        apnsPayload: [UInt8], pushType: PushType, collapseId: String?, declarative: Bool, unifiedPush: Bool = false
    ) -> TemplateMapping {
        // A marker the payload does not already hold once encoded: the first of "\u{1}id0", "\u{1}id1", … found
        // exactly once in the message. A payload of finitely many bytes can hold only finitely many, so the loop ends.
        for n in 0... {
            let marker = "\u{1}id\(n)"
            switch map(
                apnsPayload: apnsPayload, pushType: pushType, id: marker, collapseId: collapseId, declarative: declarative,
                unifiedPush: unifiedPush)
            {
            case .skip(let reason):
                return .skip(reason)
            case .send(let bytes):
                var encoded: [UInt8] = []
                JSONValue.encodeString(marker, into: &encoded)
                let found = bytes.ranges(of: encoded)
                guard found.count == 1, let range = found.first else { continue }
                return .send(Template(prefix: Array(bytes[..<range.lowerBound]), suffix: Array(bytes[range.upperBound...])))
            }
        }
        preconditionFailure("unreachable: some marker is absent from a finite payload")
    }
}
