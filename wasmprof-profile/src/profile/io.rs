//! Reading, checking and writing profile files.
//!
//! A profile comes from disk, so every index in it is checked before any
//! report trusts it: a corrupt file is an error that names the file, never a
//! panic in a report writer.

use std::fs;
use std::io::Write;
use std::path::Path;

use super::model::{FORMAT, FORMAT_MAJOR, Profile};
use crate::error::Error;

/// Reads and checks one profile file.
pub fn read_profile(path: &Path) -> Result<Profile, Error> {
    let bytes = fs::read(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_profile(&bytes, path)
}

/// Parses and checks profile bytes; `path` only names them in errors.
pub fn parse_profile(bytes: &[u8], path: &Path) -> Result<Profile, Error> {
    check_format_field(bytes, path)?;
    let profile: Profile =
        serde_json::from_slice(bytes).map_err(|source| json_error(path, source))?;
    check(&profile).map_err(|what| Error::InconsistentFile {
        path: path.to_owned(),
        what,
    })?;
    Ok(profile)
}

/// Looks at `format` before the rest so that a newer file is refused for its
/// version, not for a field this version does not know.
fn check_format_field(bytes: &[u8], path: &Path) -> Result<(), Error> {
    #[derive(serde::Deserialize)]
    struct Header {
        format: Option<String>,
    }
    let header: Header =
        serde_json::from_slice(bytes).map_err(|source| json_error(path, source))?;
    let found = header.format.unwrap_or_default();
    if found == FORMAT {
        return Ok(());
    }
    let major = found
        .strip_prefix("wasmprof/")
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.parse::<u32>().ok());
    match major {
        Some(m) if m > FORMAT_MAJOR => Err(Error::NewerFormat {
            path: path.to_owned(),
            found,
        }),
        // Version 1 differs only in how the nodes are written.
        Some(1) => Ok(()),
        Some(m) if m == FORMAT_MAJOR => Ok(()),
        _ => Err(Error::UnknownFormat {
            path: path.to_owned(),
            found,
        }),
    }
}

/// A profile's JSON that ends early is cut short; any other error is one
/// of shape.
fn json_error(path: &Path, source: serde_json::Error) -> Error {
    if source.is_eof() {
        Error::Truncated {
            path: path.to_owned(),
            line: source.line(),
            column: source.column(),
        }
    } else {
        Error::Malformed {
            path: path.to_owned(),
            kind: crate::input::InputKind::Wasmprof,
            source: Box::new(source),
        }
    }
}

/// Checks every index and number a report relies on, so that a profile
/// made by hand or read from an untrusted file is refused rather than
/// trusted blindly.
pub fn validate(profile: &Profile) -> Result<(), Error> {
    check(profile).map_err(|what| Error::Inconsistent { what })
}

/// [`validate`]'s checks, saying which invariant is broken.
pub(crate) fn check(profile: &Profile) -> Result<(), String> {
    let root = profile
        .nodes
        .first()
        .ok_or_else(|| "it has no nodes (not even the root)".to_string())?;
    if root.parent.is_some() || root.function.is_some() {
        return Err("node 0 must be the root, with no parent and no function".into());
    }
    for (index, node) in profile.nodes.iter().enumerate().skip(1) {
        match node.parent {
            Some(parent) if parent < index => {}
            Some(parent) => {
                return Err(format!(
                    "node {index} has parent {parent}, which does not come before it"
                ));
            }
            None => return Err(format!("node {index} has no parent")),
        }
        if let Some(function) = node.function {
            if function >= profile.functions.len() {
                return Err(format!(
                    "node {index} names function {function}, but there are only {}",
                    profile.functions.len()
                ));
            }
        }
        if !node.inclusive_nanos.is_finite() || node.inclusive_nanos < 0.0 {
            return Err(format!(
                "node {index} has inclusive time {}",
                node.inclusive_nanos
            ));
        }
    }
    super::invariants::check_times(profile)?;
    for future in &profile.futures {
        if future.node == Profile::ROOT || future.node >= profile.nodes.len() {
            return Err(format!(
                "a futures entry names node {}, which is not an async call path",
                future.node
            ));
        }
    }
    if let Some(memory) = &profile.memory {
        memory.validate(profile.nodes.len())?;
    }
    if let Some(frames) = &profile.frames {
        frames.validate(profile.nodes.len())?;
    }
    Ok(())
}

/// Writes `profile` to `path` without ever leaving a half-written file: the
/// bytes go to a temporary file beside it that is then renamed.
pub fn write_profile(profile: &Profile, path: &Path) -> Result<(), Error> {
    let write_err = |source| Error::WriteFile {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(write_err)?;
    }
    let temporary = path.with_extension("json.partial");
    let file = fs::File::create(&temporary).map_err(write_err)?;
    // Compact and buffered: a million-node profile is one pass of large
    // writes, not a system call per token.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    serde_json::to_writer(&mut out, profile).map_err(|e| write_err(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(write_err)?;
    let file = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    file.sync_all().map_err(write_err)?;
    drop(file);
    fs::rename(&temporary, path).map_err(write_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        write_profile(&crate::fixtures::demo_profile(), &path).unwrap();
        assert_eq!(
            read_profile(&path).unwrap(),
            crate::fixtures::demo_profile()
        );
        assert!(!path.with_extension("json.partial").exists());
    }

    #[test]
    fn truncated_file_is_a_json_error_naming_the_file() {
        let text = serde_json::to_string(&crate::fixtures::demo_profile()).unwrap();
        let err =
            parse_profile(&text.as_bytes()[..text.len() / 2], Path::new("x.json")).unwrap_err();
        assert!(matches!(err, Error::Truncated { .. }), "{err}");
        assert!(err.to_string().contains("x.json"));
        let err = parse_profile(
            br#"{"format": "wasmprof/2", "nodes": 5}"#,
            Path::new("x.json"),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Malformed { .. }), "{err}");
    }

    #[test]
    fn newer_major_version_is_refused_for_its_version() {
        let mut value = serde_json::to_value(crate::fixtures::demo_profile()).unwrap();
        value["format"] = "wasmprof/3".into();
        value["something_new"] = 1.into();
        let err = parse_profile(value.to_string().as_bytes(), Path::new("x.json")).unwrap_err();
        assert!(matches!(err, Error::NewerFormat { .. }), "{err}");
    }

    #[test]
    fn a_version_1_file_with_node_objects_is_still_read() {
        let mut value = serde_json::to_value(crate::fixtures::demo_profile()).unwrap();
        value["format"] = "wasmprof/1".into();
        value["nodes"] = serde_json::to_value(
            crate::fixtures::demo_profile()
                .nodes
                .iter()
                .map(|n| {
                    serde_json::json!({
                        "parent": n.parent, "function": n.function, "calls": n.calls,
                        "inclusive_nanos": n.inclusive_nanos,
                    })
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let read = parse_profile(value.to_string().as_bytes(), Path::new("x.json")).unwrap();
        assert_eq!(read.nodes, crate::fixtures::demo_profile().nodes);
    }

    #[test]
    fn other_json_is_refused_as_unknown_format() {
        let err = parse_profile(br#"{"nodes": []}"#, Path::new("x.json")).unwrap_err();
        assert!(matches!(err, Error::UnknownFormat { .. }), "{err}");
    }

    #[test]
    fn dangling_indices_are_inconsistent_not_a_panic() {
        let mut profile = crate::fixtures::demo_profile();
        profile.nodes[2].function = Some(7);
        assert!(
            validate(&profile)
                .unwrap_err()
                .to_string()
                .contains("function 7")
        );
        let mut profile = crate::fixtures::demo_profile();
        profile.nodes[1].parent = Some(2);
        assert!(validate(&profile).is_err());
    }

    #[test]
    fn self_time_is_inclusive_less_children() {
        assert_eq!(
            crate::fixtures::demo_profile().self_nanos(),
            vec![0.0, 60.0, 40.0]
        );
    }
}
