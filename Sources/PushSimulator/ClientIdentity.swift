import X509

/// What an APNs client certificate entitles its holder to: topics and environments.
struct ClientIdentity: Sendable, Equatable {
    /// Topics from the subject UID and Apple's topics extension, UID first.
    var topics: [String]
    /// The certificate carries the development OID (or is universal).
    var development: Bool
    /// The certificate carries the production OID (or is universal).
    var production: Bool

    static let uidOID = "0.9.2342.19200300.100.1.1"
    static let developmentOID = "1.2.840.113635.100.6.3.1"
    static let productionOID = "1.2.840.113635.100.6.3.2"
    static let universalOID = "1.2.840.113635.100.6.3.6"
    static let topicsOID = "1.2.840.113635.100.6.3.6"

    init(topics: [String], development: Bool, production: Bool) {
        self.topics = topics
        self.development = development
        self.production = production
    }

    /// Reads topics and environments from a DER certificate.
    init(der: [UInt8]) throws {
        try self.init(certificate: Certificate(derEncoded: der))
    }

    init(certificate: Certificate) {
        var topics: [String] = []
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type.description == Self.uidOID {
                if let uid = String(attribute.value), !uid.isEmpty { topics.append(uid) }
            }
        }
        var development = false
        var production = false
        for ext in certificate.extensions {
            switch ext.oid.description {
            case Self.developmentOID: development = true
            case Self.productionOID: production = true
            case Self.topicsOID:
                // Apple's universal certificates: both environments, plus the topic list in the value.
                development = true
                production = true
                for topic in Self.parseTopics(Array(ext.value)) where !topics.contains(topic) {
                    topics.append(topic)
                }
            default: break
            }
        }
        self.init(topics: topics, development: development, production: production)
    }

    /// Parses the topics extension leniently: a SEQUENCE of UTF8String topics, each optionally followed by
    /// a SEQUENCE of push types. Anything unexpected is skipped rather than rejected.
    static func parseTopics(_ der: [UInt8]) -> [String] {
        var reader = DERReader(bytes: der[...])
        guard let outer = reader.next(), outer.tag == 0x30 else { return [] }
        var inner = DERReader(bytes: outer.content)
        var topics: [String] = []
        while let element = inner.next() {
            if element.tag == 0x0c || element.tag == 0x16 || element.tag == 0x13 {
                topics.append(String(decoding: element.content, as: UTF8.self))
            }
        }
        return topics
    }
}

/// A minimal DER TLV reader (definite lengths only), enough for the topics extension.
struct DERReader {
    var bytes: ArraySlice<UInt8>

    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        guard let tag = bytes.first else { return nil }
        var i = bytes.index(after: bytes.startIndex)
        guard i < bytes.endIndex else { return nil }
        var length = Int(bytes[i])
        i += 1
        if length & 0x80 != 0 {
            let count = length & 0x7f
            guard count > 0, count <= 4, i + count <= bytes.endIndex else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
        }
        guard length <= bytes.endIndex - i else { return nil }
        let content = bytes[i..<(i + length)]
        bytes = bytes[(i + length)...]
        return (tag, content)
    }
}
