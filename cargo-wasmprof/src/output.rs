//! Writing a path the user gave, as the OS expects it to be written.
//!
//! A regular file is replaced whole or not at all: the bytes go to a
//! temporary file beside it, renamed over it once complete, so that a
//! failed write leaves the old file. That is never right for anything
//! else: renamed over `/dev/null`, the temporary file would replace the
//! device itself (as root, for every program on the machine), and a FIFO,
//! `/dev/stdout` or a terminal would lose its reader. Those are written in
//! place, as a shell's `>` would; `-` is standard output; Windows' `NUL`
//! and `CON` are devices too.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// How an output path is to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// `-`: standard output.
    Stdout,
    /// A regular file, or none yet: replaced atomically (the path is the
    /// file's own, through any symlink).
    Replace(PathBuf),
    /// A device, a FIFO, a socket: opened and written where it is.
    InPlace(PathBuf),
}

impl Destination {
    /// What `path` is, looked at now.
    pub(crate) fn of(path: &Path) -> Result<Destination> {
        if path.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        if is_windows_device_name(path) {
            return Ok(Destination::InPlace(path.to_owned()));
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => anyhow::bail!(
                "{} is a directory: give a file name to write to",
                path.display()
            ),
            Ok(meta) if meta.is_file() => {
                // Through a symlink, the file it names is the one replaced,
                // and the link stays.
                let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
                Ok(Destination::Replace(target))
            }
            Ok(_) => Ok(Destination::InPlace(path.to_owned())),
            Err(_) => Ok(Destination::Replace(path.to_owned())),
        }
    }
}

/// `NUL`, `CON`, `\\.\NUL`…: names Windows gives devices in any directory
/// and with any extension (`nul.txt` is the null device too).
fn is_windows_device_name(path: &Path) -> bool {
    if !cfg!(windows) {
        return false;
    }
    is_device_name(path)
}

/// The test of [`is_windows_device_name`], on every platform so that its
/// unit tests run everywhere.
fn is_device_name(path: &Path) -> bool {
    let text = path.to_string_lossy();
    if text.starts_with(r"\\.\") {
        return true;
    }
    // Either separator, so that the test reads Windows paths anywhere.
    let Some(name) = text.rsplit(['/', '\\']).next().filter(|n| !n.is_empty()) else {
        return false;
    };
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    const DEVICES: &[&str] = &["NUL", "CON", "PRN", "AUX", "CONIN$", "CONOUT$"];
    let numbered = |prefix: &str| {
        stem.len() == 4
            && stem[..3].eq_ignore_ascii_case(prefix)
            && stem.as_bytes()[3].is_ascii_digit()
            && stem.as_bytes()[3] != b'0'
    };
    DEVICES.iter().any(|d| stem.eq_ignore_ascii_case(d)) || numbered("COM") || numbered("LPT")
}

/// Writes what `render` writes to `path` (see [`Destination`]); returns
/// where it went.
pub(crate) fn write_to(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<Destination> {
    let destination = Destination::of(path)?;
    match &destination {
        Destination::Stdout => {
            let mut stdout = std::io::stdout().lock();
            render(&mut stdout)?;
            stdout
                .flush()
                .context("could not write to standard output")?;
        }
        Destination::InPlace(device) => {
            let file = OpenOptions::new()
                .write(true)
                .open(device)
                .with_context(|| format!("could not open {}", device.display()))?;
            let mut out = std::io::BufWriter::new(file);
            render(&mut out).map_err(|e| with_path(e, device))?;
            out.flush()
                .with_context(|| format!("could not write {}", device.display()))?;
        }
        Destination::Replace(file) => replace(file, path, render)?,
    }
    Ok(destination)
}

/// Writes `file` whole or not at all, through a temporary file beside it;
/// errors name `shown`, the path as the user gave it.
fn replace(
    file: &Path,
    shown: &Path,
    render: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
    }
    let partial = file.with_file_name(format!(
        ".{}.partial-{}",
        file.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output"),
        std::process::id()
    ));
    let written = (|| {
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            File::create(&partial)
                .with_context(|| format!("could not create {}", shown.display()))?,
        );
        render(&mut out).map_err(|e| with_path(e, shown))?;
        let done = out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("could not write {}", shown.display()))?;
        done.sync_all()
            .with_context(|| format!("could not write {}", shown.display()))?;
        drop(done);
        std::fs::rename(&partial, file)
            .with_context(|| format!("could not write {}", shown.display()))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// A write that failed names the path; any other error (a report the
/// profile cannot give) is left as it is.
fn with_path(error: anyhow::Error, path: &Path) -> anyhow::Error {
    if error.root_cause().is::<std::io::Error>() {
        error.context(format!("could not write {}", path.display()))
    } else {
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) -> Result<Destination> {
        write_to(path, |out| Ok(out.write_all(text.as_bytes())?))
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.txt");
        std::fs::write(&path, "old").unwrap();
        assert!(matches!(
            write(&path, "new").unwrap(),
            Destination::Replace(_)
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let failed = write_to(&path, |out| {
            out.write_all(b"half")?;
            anyhow::bail!("the report cannot be made")
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new", "kept");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[test]
    fn a_file_in_a_new_directory_is_made_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reports/today.txt");
        write(&path, "x").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");
    }

    #[test]
    fn a_directory_is_refused_with_what_to_give() {
        let dir = tempfile::tempdir().unwrap();
        let error = write(dir.path(), "x").unwrap_err().to_string();
        assert!(error.contains("is a directory"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_file_keeps_the_link_and_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.txt");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn dev_null_is_written_in_place_and_stays_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        assert_eq!(
            write(null, "discarded").unwrap(),
            Destination::InPlace(null.to_owned())
        );
        let kind = std::fs::metadata(null).unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null is still a device");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_for_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        assert!(matches!(
            write(&fifo, "through the pipe").unwrap(),
            Destination::InPlace(_)
        ));
        assert_eq!(reader.join().unwrap(), "through the pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_dash_is_standard_output() {
        assert_eq!(
            Destination::of(Path::new("-")).unwrap(),
            Destination::Stdout
        );
    }

    #[test]
    fn windows_device_names_are_known_in_any_case_directory_and_extension() {
        for device in [
            "NUL",
            "nul",
            "C:\\work\\nul.txt",
            "CON",
            "\\\\.\\NUL",
            "COM1",
            "lpt9.log",
        ] {
            assert!(is_device_name(Path::new(device)), "{device}");
        }
        for file in [
            "null",
            "console.txt",
            "COM0",
            "COM10",
            "nullable.rs",
            "report.txt",
        ] {
            assert!(!is_device_name(Path::new(file)), "{file}");
        }
    }
}
