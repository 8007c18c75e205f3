//! `--verify-counts` on the command line: what the check of the call
//! counts against the oracle's (made by
//! [`wasmprof_profile::snapshot::count_check`]) tells the user.

use wasmprof_profile::profile::CountCheck;
use wasmprof_profile::snapshot::count_check::differences_error;

/// Says what the check found, once the profile is saved: a status line
/// when every count agreed, else the error the command ends with.
pub(crate) fn conclude(check: Option<&CountCheck>, what: &str) -> anyhow::Result<()> {
    let Some(check) = check else {
        return Ok(());
    };
    match differences_error(check, what) {
        Some(error) => Err(error),
        None => {
            announce_verified(check);
            Ok(())
        }
    }
}

/// The status line of a check whose counts all agreed; nothing otherwise
/// (a report names the differences in its preamble).
pub(crate) fn announce_verified(check: &CountCheck) {
    if !check.differences.is_empty() {
        return;
    }
    let cut = match &check.cut_call {
        Some(function) => format!(
            " but one call of {function}, which the end of the run cut between its two counts"
        ),
        None => String::new(),
    };
    crate::terminal::status(
        "Verified",
        &format!(
            "every call count of {} functions: each equal to a second, independent count of \
             the same run{cut}",
            check.functions
        ),
    );
}
