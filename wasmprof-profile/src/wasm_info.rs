//! What a built `.wasm` says about itself: the wasm-bindgen version it was
//! built against and whether it still has its name section.

use crate::error::{Error, Result};
use wasmparser::{Parser, Payload};

/// Facts read from a module's sections.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WasmInfo {
    /// From the `__wasm_bindgen_unstable` custom section: the authoritative
    /// version of the `wasm-bindgen` crate the module was built with.
    pub bindgen_version: Option<String>,
    /// Whether the `name` custom section is present.
    pub has_names: bool,
    /// Whether the module exports `__wasmprof_snapshot`.
    pub has_snapshot_export: bool,
    /// The module's imports, as `module.name`.
    pub imports: Vec<String>,
    /// The names of the functions it exports.
    pub function_exports: Vec<String>,
    /// wasm-bindgen-test's `__wasm_bindgen_test_unstable` section: where the
    /// tests are configured to run (1: browser, 2-4: workers, 5: Node).
    pub bindgen_test_mode: Option<Vec<u8>>,
    /// Whether its memory is shared: a module built for threads.
    pub shared_memory: bool,
    /// Whether the file is a component (WASI 0.2, `wasm32-wasip2`) rather
    /// than a core module; the other facts are then its core modules'.
    pub component: bool,
}

/// Reads the facts of [`WasmInfo`] from a module's or a component's bytes.
pub fn inspect(bytes: &[u8]) -> Result<WasmInfo> {
    let mut info = WasmInfo::default();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(Error::invalid_wasm)? {
            Payload::Version {
                encoding: wasmparser::Encoding::Component,
                ..
            } => info.component = true,
            Payload::CustomSection(section) => match section.name() {
                "name" => info.has_names = true,
                "__wasm_bindgen_unstable" if info.bindgen_version.is_none() => {
                    info.bindgen_version = bindgen_version(section.data());
                }
                "__wasm_bindgen_test_unstable" => {
                    info.bindgen_test_mode = Some(section.data().to_vec());
                }
                _ => {}
            },
            Payload::ExportSection(exports) => {
                for export in exports {
                    let export = export.map_err(Error::invalid_wasm)?;
                    if export.name == "__wasmprof_snapshot" {
                        info.has_snapshot_export = true;
                    } else if export.kind == wasmparser::ExternalKind::Func {
                        info.function_exports.push(export.name.to_owned());
                    }
                }
            }
            Payload::ImportSection(imports) => {
                // Flattens the compact encodings (one module name for a
                // group of imports) into one import each.
                for import in imports.into_imports() {
                    let import = import.map_err(Error::invalid_wasm)?;
                    if let wasmparser::TypeRef::Memory(memory) = import.ty {
                        info.shared_memory |= memory.shared;
                    }
                    info.imports
                        .push(format!("{}.{}", import.module, import.name));
                }
            }
            Payload::MemorySection(memories) => {
                for memory in memories {
                    info.shared_memory |= memory.map_err(Error::invalid_wasm)?.shared;
                }
            }
            _ => {}
        }
    }
    Ok(info)
}

/// The core module whose names and table the profile's functions are in:
/// the file itself, or in a component the core module inside it that
/// exports `__wasmprof_snapshot`. A component's other core modules (its
/// shims and adapters) number their functions and table slots each from 0,
/// so their names must not be mixed with it. A component without one is
/// returned whole.
pub fn profiled_module(bytes: &[u8]) -> &[u8] {
    let nested = Parser::new(0)
        .parse_all(bytes)
        .map_while(|payload| payload.ok())
        .filter_map(|payload| match payload {
            Payload::ModuleSection {
                unchecked_range, ..
            } => bytes.get(unchecked_range),
            _ => None,
        });
    let mut nested = nested.peekable();
    if nested.peek().is_none() {
        return bytes;
    }
    nested
        .find(|module| inspect(module).is_ok_and(|info| info.has_snapshot_export))
        .unwrap_or(bytes)
}

/// The names the module's name section gives its functions, by function
/// index (imports counted first, as `wasm-function[N]` counts them); in a
/// component, its profiled core module's ([`profiled_module`]).
pub fn function_names(bytes: &[u8]) -> Result<std::collections::HashMap<u32, String>> {
    let bytes = profiled_module(bytes);
    let mut names = std::collections::HashMap::new();
    for payload in Parser::new(0).parse_all(bytes) {
        if let Payload::CustomSection(section) = payload.map_err(Error::invalid_wasm)? {
            if let wasmparser::KnownCustom::Name(reader) = section.as_known() {
                for name in reader {
                    // A malformed name subsection leaves the names read so far.
                    let Ok(wasmparser::Name::Function(map)) = name else {
                        continue;
                    };
                    for naming in map.into_iter().flatten() {
                        names.insert(naming.index, naming.name.to_owned());
                    }
                }
            }
        }
    }
    Ok(names)
}

/// The function in each slot of table 0 that an active element segment
/// fills: what a function pointer's value (its slot) points at; in a
/// component, its profiled core module's ([`profiled_module`]).
pub fn table_slots(bytes: &[u8]) -> Result<std::collections::HashMap<u32, u32>> {
    let bytes = profiled_module(bytes);
    let mut slots = std::collections::HashMap::new();
    for payload in Parser::new(0).parse_all(bytes) {
        let Payload::ElementSection(reader) = payload.map_err(Error::invalid_wasm)? else {
            continue;
        };
        for element in reader {
            let element = element.map_err(Error::invalid_wasm)?;
            let wasmparser::ElementKind::Active {
                table_index: None | Some(0),
                offset_expr,
            } = element.kind
            else {
                continue;
            };
            let Some(Ok(wasmparser::Operator::I32Const { value: offset })) =
                offset_expr.get_operators_reader().into_iter().next()
            else {
                continue;
            };
            let functions: Vec<u32> = match element.items {
                wasmparser::ElementItems::Functions(functions) => functions
                    .into_iter()
                    .collect::<Result<_, _>>()
                    .map_err(Error::invalid_wasm)?,
                wasmparser::ElementItems::Expressions(_, expressions) => expressions
                    .into_iter()
                    .filter_map(|expression| {
                        match expression.ok()?.get_operators_reader().into_iter().next() {
                            Some(Ok(wasmparser::Operator::RefFunc { function_index })) => {
                                Some(function_index)
                            }
                            _ => None,
                        }
                    })
                    .collect(),
            };
            for (at, function) in functions.into_iter().enumerate() {
                slots.insert(offset as u32 + at as u32, function);
            }
        }
    }
    Ok(slots)
}

/// The bytes of the code section: what two builds must share to be the same
/// program, whatever their names and custom sections say.
pub fn code_section(bytes: &[u8]) -> Result<&[u8]> {
    for payload in Parser::new(0).parse_all(bytes) {
        if let Payload::CodeSectionStart { range, .. } = payload.map_err(Error::invalid_wasm)? {
            return Ok(&bytes[range]);
        }
    }
    Err(Error::NoCode)
}

/// The section is a sequence of length-prefixed records; the first is JSON
/// with `version` (and `schema_version`).
fn bindgen_version(data: &[u8]) -> Option<String> {
    let length = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    let record = data.get(4..4 + length)?;
    let value: serde_json::Value = serde_json::from_slice(record).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bindgen_version_record() {
        let json = br#"{"schema_version":"0.2.130","version":"0.2.130"}"#;
        let mut data = (json.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(json);
        data.extend_from_slice(b"more records");
        assert_eq!(bindgen_version(&data).as_deref(), Some("0.2.130"));
        assert_eq!(bindgen_version(&data[..10]), None);
    }

    /// A component with the profiled core module first and a shim after
    /// it, both naming function 0 and filling table slot 0: only the
    /// profiled module's are the profile's.
    #[test]
    fn a_component_s_names_and_slots_are_its_profiled_module_s() {
        let component = wat::parse_str(
            r#"(component
                (core module $profiled
                    (func $real_function)
                    (func $marker)
                    (func (export "__wasmprof_snapshot") (result i32) i32.const 0)
                    (table 2 funcref)
                    (elem (i32.const 1) func $marker))
                (core module $shim
                    (func $shim_function)
                    (table 2 funcref)
                    (elem (i32.const 1) func $shim_function)))"#,
        )
        .unwrap();
        assert!(inspect(&component).unwrap().component);
        let names = function_names(&component).unwrap();
        assert_eq!(names.get(&0).map(String::as_str), Some("real_function"));
        assert_eq!(names.get(&1).map(String::as_str), Some("marker"));
        assert_eq!(table_slots(&component).unwrap().get(&1), Some(&1));
        // A core module is its own profiled module.
        let module = wat::parse_str("(module (func $only))").unwrap();
        assert_eq!(profiled_module(&module), &module[..]);
        assert_eq!(
            function_names(&module).unwrap().get(&0).map(String::as_str),
            Some("only")
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(inspect(b"not wasm").is_err());
    }
}
