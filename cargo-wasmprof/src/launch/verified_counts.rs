//! `--verify-counts` on the command line: what the check of the call
//! counts against the oracle's (made by
//! [`wasmprof_profile::snapshot::count_check`]) tells the user.

use wasmprof_profile::profile::{CountCheck, CountDifference};

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

/// The error a run whose counts differ ends with, after its profile was
/// saved: each function with both counts, largest difference first.
fn differences_error(check: &CountCheck, what: &str) -> Option<anyhow::Error> {
    if check.differences.is_empty() {
        return None;
    }
    let mut differences: Vec<&CountDifference> = check.differences.iter().collect();
    differences.sort_by_key(|d| std::cmp::Reverse(d.profile.abs_diff(d.oracle)));
    const SHOWN: usize = 20;
    let mut text = format!(
        "{what}: the call counts of {} of {} functions differ from a second, independent \
         count of the same run (--verify-counts):",
        differences.len(),
        check.functions
    );
    for d in differences.iter().take(SHOWN) {
        text.push_str(&format!(
            "\n  {}: {} in the profile, {} counted independently",
            d.function, d.profile, d.oracle
        ));
    }
    if differences.len() > SHOWN {
        text.push_str(&format!("\n  and {} more", differences.len() - SHOWN));
    }
    if check.threads_left_running > 0 {
        text.push_str(&format!(
            "\nThe profile was saved all the same. {} thread(s) of the program were still \
             running when its main thread was done; their calls so far are read where they \
             stand, but a thread stopped while it recorded a call is left out (the profile's \
             threads name it).",
            check.threads_left_running
        ));
    } else {
        text.push_str(
            "\nThe profile was saved all the same. This is a bug in wasmprof: please report \
             it with the program, or the crate, that shows it.",
        );
    }
    Some(anyhow::anyhow!(text))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn check(differences: Vec<CountDifference>) -> CountCheck {
        CountCheck {
            functions: 2,
            differences,
            ..CountCheck::default()
        }
    }

    #[test]
    fn equal_counts_end_without_an_error() {
        assert!(differences_error(&check(Vec::new()), "run").is_none());
    }

    #[test]
    fn a_lost_call_names_the_function_and_both_counts() {
        let error = differences_error(
            &check(vec![CountDifference {
                function: "full".into(),
                profile: 7,
                oracle: 8,
            }]),
            "run",
        )
        .unwrap()
        .to_string();
        assert!(error.contains("1 of 2 functions"), "{error}");
        assert!(
            error.contains("full: 7 in the profile, 8 counted independently"),
            "{error}"
        );
        assert!(error.contains("a bug in wasmprof"), "{error}");
    }
}
