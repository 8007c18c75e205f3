//! The nodes of a profile file as columns (`wasmprof/2`): one array per
//! field instead of one object per node, which makes a million-node file
//! about half as large and much quicker to write and read. Files of
//! `wasmprof/1`, an array of node objects, are still read.
//!
//! ```json
//! "nodes": { "parent": [null, 0, 1], "function": [null, 0, 1],
//!            "calls": [0, 200, 400], "inclusive_nanos": [0.0, 4.3e8, 2.1e8],
//!            "flags": [0, 0, 1], "samples": [0, 0, 0] }
//! ```
//!
//! `flags` (bit 0 `open`, bit 1 `partly_timed`, bit 2 `sampled`) and
//! `samples` are left out when every node has 0.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::Node;

const OPEN: u8 = 1;
const PARTLY_TIMED: u8 = 2;
const SAMPLED: u8 = 4;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Columns {
    parent: Vec<Option<usize>>,
    function: Vec<Option<usize>>,
    calls: Vec<u64>,
    inclusive_nanos: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    flags: Vec<u8>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    samples: Vec<u64>,
}

pub(super) fn serialize<S: Serializer>(nodes: &[Node], serializer: S) -> Result<S::Ok, S::Error> {
    let flag = |n: &Node| {
        u8::from(n.open) * OPEN
            + u8::from(n.partly_timed) * PARTLY_TIMED
            + u8::from(n.sampled) * SAMPLED
    };
    let flags: Vec<u8> = if nodes.iter().any(|n| flag(n) != 0) {
        nodes.iter().map(flag).collect()
    } else {
        Vec::new()
    };
    let samples = if nodes.iter().any(|n| n.samples != 0) {
        nodes.iter().map(|n| n.samples).collect()
    } else {
        Vec::new()
    };
    Columns {
        parent: nodes.iter().map(|n| n.parent).collect(),
        function: nodes.iter().map(|n| n.function).collect(),
        calls: nodes.iter().map(|n| n.calls).collect(),
        inclusive_nanos: nodes.iter().map(|n| n.inclusive_nanos).collect(),
        flags,
        samples,
    }
    .serialize(serializer)
}

pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Node>, D::Error> {
    deserializer.deserialize_any(NodesVisitor)
}

struct NodesVisitor;

impl<'de> Visitor<'de> for NodesVisitor {
    type Value = Vec<Node>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the nodes as columns (an object of arrays) or as an array of node objects")
    }

    /// `wasmprof/1`: an array of node objects.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Node>, A::Error> {
        let mut nodes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(node) = seq.next_element()? {
            nodes.push(node);
        }
        Ok(nodes)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<Node>, A::Error> {
        let columns = Columns::deserialize(de::value::MapAccessDeserializer::new(map))?;
        let count = columns.parent.len();
        let lengths = [
            ("function", columns.function.len()),
            ("calls", columns.calls.len()),
            ("inclusive_nanos", columns.inclusive_nanos.len()),
        ];
        if let Some((name, len)) = lengths.iter().find(|(_, len)| *len != count) {
            return Err(de::Error::custom(format!(
                "the node columns differ in length: {count} parents but {len} {name}"
            )));
        }
        for (name, column) in [
            ("flags", columns.flags.len()),
            ("samples", columns.samples.len()),
        ] {
            if column != 0 && column != count {
                return Err(de::Error::custom(format!(
                    "the node columns differ in length: {count} parents but {column} {name}"
                )));
            }
        }
        Ok((0..count)
            .map(|i| {
                let flags = columns.flags.get(i).copied().unwrap_or(0);
                Node {
                    parent: columns.parent[i],
                    function: columns.function[i],
                    calls: columns.calls[i],
                    inclusive_nanos: columns.inclusive_nanos[i],
                    open: flags & OPEN != 0,
                    partly_timed: flags & PARTLY_TIMED != 0,
                    sampled: flags & SAMPLED != 0,
                    samples: columns.samples.get(i).copied().unwrap_or(0),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        nodes: Vec<Node>,
    }

    fn nodes() -> Vec<Node> {
        vec![
            Node::root(),
            Node {
                parent: Some(0),
                function: Some(0),
                calls: 200,
                inclusive_nanos: 1234.5,
                open: true,
                sampled: true,
                ..Node::root()
            },
            Node {
                parent: Some(1),
                function: Some(1),
                calls: 3,
                inclusive_nanos: 7.25,
                partly_timed: true,
                samples: 9,
                ..Node::root()
            },
        ]
    }

    #[test]
    fn columns_round_trip_and_rows_are_still_read() {
        let holder = Holder { nodes: nodes() };
        let text = serde_json::to_string(&holder).unwrap();
        assert!(
            text.starts_with(r#"{"nodes":{"parent":[null,0,1],"function":[null,0,1]"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), holder);
        let rows = serde_json::json!({ "nodes": nodes() }).to_string();
        assert_eq!(serde_json::from_str::<Holder>(&rows).unwrap(), holder);
    }

    #[test]
    fn default_columns_are_left_out_and_bad_columns_refused() {
        let plain = Holder {
            nodes: vec![Node::root()],
        };
        let text = serde_json::to_string(&plain).unwrap();
        assert!(
            !text.contains("flags") && !text.contains("samples"),
            "{text}"
        );
        let uneven = r#"{"nodes":{"parent":[null,0],"function":[null],"calls":[0,1],"inclusive_nanos":[0,1]}}"#;
        let err = serde_json::from_str::<Holder>(uneven)
            .unwrap_err()
            .to_string();
        assert!(err.contains("2 parents but 1 function"), "{err}");
        assert!(serde_json::from_str::<Holder>(r#"{"nodes": 7}"#).is_err());
    }
}
