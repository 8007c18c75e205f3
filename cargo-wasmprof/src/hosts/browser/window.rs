//! A recording window (`--after`, `--duration`) over a page run: the
//! snapshot taken when the window opens, when it is to close, and the
//! profile of what ran in between (the closing snapshot less the opening
//! one).
//!
//! Both snapshots are evaluations in the page, which run between its tasks:
//! no call is running then, so every call in the window began and ended in
//! it and no time is cut in two.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmprof_wire::Snapshot;

use super::driver::{Evaluation, PageDriver};
use crate::hosts::host::WindowSpec;
use wasmprof_profile::profile::Window;

/// The snapshot the window opens with; the frames so far are forgotten in
/// the same task, so the window's frames are its own. A page without an
/// instrumented instance yet (a plain build, or one still loading) opens
/// it with none: whatever it runs later is all in the window.
const OPENING_EXPRESSION: &str = "(() => { const h = globalThis.__wasmprofHost; \
     if (!h) return null; const snapshot = h.hasInstance() ? h.snapshotBase64() : null; \
     h.resetFrames(); return { snapshot }; })()";

pub(super) struct Recording {
    spec: WindowSpec,
    /// When the page began to load: what `--after` counts from.
    began: Instant,
    /// The snapshot asked for when the window was due to open.
    opening: Option<Evaluation>,
    /// The snapshot the window opened with (none before the instrumented
    /// instance existed), and when (into the run).
    opened: Option<(Option<Vec<u8>>, Duration)>,
}

impl Recording {
    pub(super) fn new(spec: WindowSpec, began: Instant) -> Recording {
        Recording {
            spec,
            began,
            opening: None,
            opened: None,
        }
    }

    /// Opens the window when it is due, and says whether it is time to
    /// close it.
    pub(super) fn due_to_close(&mut self, driver: &mut dyn PageDriver) -> bool {
        let into_run = self.began.elapsed();
        if self.opens_later() && self.opened.is_none() {
            if let Some(reply) = self.opening.as_ref().and_then(Evaluation::ready) {
                self.opening = None;
                // No host API yet: asked again below.
                if let Some(reply) = reply.ok().filter(|v| v.is_object()) {
                    self.opened = Some((super::page_message::snapshot_bytes(&reply), into_run));
                }
            }
            if self.opened.is_none() && self.opening.is_none() && into_run >= self.spec.after {
                // The engine's samples start with the window, just before
                // its opening snapshot.
                if let Err(e) = driver.restart_sampler() {
                    crate::terminal::warning(&format!(
                        "the engine's sampler could not be restarted as the window opened \
                         ({e:#}): its samples include the run before the window"
                    ));
                }
                self.opening = driver.evaluate(OPENING_EXPRESSION).ok();
            }
            return false;
        }
        let start = self.start();
        self.spec
            .duration
            .is_some_and(|duration| into_run >= start + duration)
    }

    fn opens_later(&self) -> bool {
        !self.spec.after.is_zero()
    }

    /// When the window opened (the run's start when it has no `--after`).
    fn start(&self) -> Duration {
        self.opened.as_ref().map_or(Duration::ZERO, |(_, at)| *at)
    }

    /// The profile of the window, out of the snapshot taken at its end
    /// (now; none from a plain build); says what a program that ended early
    /// or a window with nothing in it means.
    pub(super) fn finish(
        &self,
        closing: Option<Vec<u8>>,
        closed_on_time: bool,
    ) -> Result<(Option<Vec<u8>>, Option<Window>)> {
        let ended = self.began.elapsed();
        if self.opens_later() && self.opened.is_none() {
            crate::terminal::warning(&format!(
                "the program ended {} into the run, before the window of --after {} opened: \
                 the profile is of the whole run",
                seconds(ended),
                seconds(self.spec.after)
            ));
            return Ok((closing, None));
        }
        let window = Window {
            start_nanos: self.start().as_nanos() as u64,
            end_nanos: ended.as_nanos() as u64,
        };
        if !closed_on_time && let Some(duration) = self.spec.duration {
            crate::terminal::warning(&format!(
                "the run ended {} into the run, before the {} of --duration were over: the \
                     profile covers {} to {}",
                seconds(ended),
                seconds(duration),
                seconds(self.start()),
                seconds(ended)
            ));
        }
        let Some(closing) = closing else {
            return Ok((None, Some(window)));
        };
        let opening = self.opened.as_ref().and_then(|(bytes, _)| bytes.as_deref());
        Ok((
            Some(profile_of_window(opening, &closing, &window)?),
            Some(window),
        ))
    }
}

/// The snapshot of what ran between two snapshots of one page (the closing
/// one less the opening one; the closing one alone when the window opened
/// with the run), with a warning when nothing of the program's ran then.
pub(crate) fn profile_of_window(
    opening: Option<&[u8]>,
    closing: &[u8],
    window: &Window,
) -> Result<Vec<u8>> {
    let end = Snapshot::decode(closing)
        .map_err(|e| anyhow::anyhow!("the page's last snapshot is unreadable: {e}"))?;
    let in_window = match opening {
        Some(opening) => {
            let start = Snapshot::decode(opening).map_err(|e| {
                anyhow::anyhow!("the snapshot the window opened with is unreadable: {e}")
            })?;
            end.since(&start)
                .context("could not take the window's start out of its end")?
        }
        None => end,
    };
    let calls: u64 = in_window.nodes.iter().skip(1).map(|n| n.calls).sum::<u64>()
        + in_window.functions.iter().map(|f| f.calls).sum::<u64>();
    if calls == 0 {
        let nanos = |n: u64| seconds(Duration::from_nanos(n));
        crate::terminal::warning(&format!(
            "no instrumented call ran in the window ({} to {} into the run): the page \
             started no frame, timer or call of your code then. Did the window open past the \
             work, or did the program wait for input?",
            nanos(window.start_nanos),
            nanos(window.end_nanos)
        ));
    }
    Ok(in_window.encode())
}

/// `2.00 s`.
fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_without_after_starts_with_the_run_and_closes_after_its_duration() {
        let recording = Recording::new(
            WindowSpec {
                after: Duration::ZERO,
                duration: Some(Duration::from_secs(3)),
            },
            Instant::now(),
        );
        assert_eq!(recording.start(), Duration::ZERO);
        assert!(!recording.opens_later());
    }

    #[test]
    fn a_run_over_before_the_window_opened_keeps_the_whole_profile() {
        let recording = Recording::new(
            WindowSpec {
                after: Duration::from_secs(5),
                duration: None,
            },
            Instant::now(),
        );
        let bytes = b"WPRF-not-read".to_vec();
        let (kept, window) = recording.finish(Some(bytes.clone()), false).unwrap();
        assert_eq!(kept, Some(bytes));
        assert_eq!(window, None);
    }
}
