//! Parses a generated JSON document with `serde_json` into a `Value`,
//! walks it, edits it and writes it out again, `ROUNDS` times, and prints
//! what it found. No wasmprof annotation anywhere: the point is `cargo
//! wasmprof run --instrument-all --instrument-crate serde_json`, a registry
//! crate instrumented crate-wide, whose output must be the plain build's.

use serde_json::{json, Map, Value};

/// How many times the document is parsed, walked and written, unless the
/// first argument says otherwise.
const ROUNDS: usize = 3;

/// A deterministic document: records with strings that need escapes,
/// numbers of every kind, nested arrays and objects, nulls and booleans.
fn document(records: usize) -> String {
    let records: Vec<Value> = (0..records)
        .map(|i| {
            json!({
                "id": i,
                "name": format!("record \"{i}\"\twith escapes \u{e9}"),
                "score": i as f64 * 0.75 - 3.5,
                "delta": -(i as i64),
                "tags": (0..i % 5).map(|t| format!("t{t}")).collect::<Vec<_>>(),
                "active": i % 3 == 0,
                "parent": if i % 4 == 0 { Value::Null } else { json!(i / 2) },
                "nested": { "depth": { "level": i % 7, "path": [i, i + 1, i + 2] } },
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "version": 2, "records": records }))
        .expect("a Value always serializes")
}

/// Numbers, strings and nodes in a value, counted by walking it.
#[derive(Default)]
struct Tally {
    numbers: usize,
    strings: usize,
    nodes: usize,
}

fn walk(value: &Value, tally: &mut Tally) {
    tally.nodes += 1;
    match value {
        Value::Number(_) => tally.numbers += 1,
        Value::String(_) => tally.strings += 1,
        Value::Array(items) => items.iter().for_each(|item| walk(item, tally)),
        Value::Object(fields) => fields.values().for_each(|field| walk(field, tally)),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Keeps the active records, each with a field it did not have.
fn edit(value: &mut Value) {
    if let Some(Value::Array(records)) = value.get_mut("records") {
        records.retain(|r| r["active"] == Value::Bool(true));
        for record in records.iter_mut() {
            if let Value::Object(fields) = record {
                let mut extra = Map::new();
                extra.insert("kept".to_owned(), Value::Bool(true));
                fields.insert("extra".to_owned(), Value::Object(extra));
            }
        }
    }
}

fn main() {
    let rounds = match std::env::args().nth(1) {
        Some(text) => text.parse().expect("the argument is a number of rounds"),
        None => ROUNDS,
    };
    let text = document(120);
    let mut written = 0;
    let mut tally = Tally::default();
    for _ in 0..rounds {
        let mut value: Value = serde_json::from_str(&text).expect("the document parses");
        walk(&value, &mut tally);
        edit(&mut value);
        written += serde_json::to_string(&value).expect("serializes").len();
    }
    println!(
        "json-walk: {} bytes in, {written} bytes out, {} nodes, {} numbers, {} strings",
        text.len(),
        tally.nodes,
        tally.numbers,
        tally.strings
    );
}
