use super::record::WORST_KEPT;
use super::*;
use crate::guard::enter;
use crate::site::Site;
use crate::site::test_cache;
use crate::snapshot::take;

static DRAW: Site = Site::new("frames_tests", "draw", "src/animation_frames.rs", 1);
static ROW: Site = Site::new("frames_tests", "row", "src/animation_frames.rs", 2);

fn frame(start_ms: f64, duration_ms: f64, rows: u32) {
    begin();
    {
        let _draw = enter(&DRAW, test_cache(&DRAW), None);
        for _ in 0..rows {
            let _row = enter(&ROW, test_cache(&ROW), None);
        }
    }
    end(start_ms, duration_ms);
}

#[test]
fn every_frame_is_timed_and_the_slowest_keep_their_own_calls() {
    reset();
    for i in 0..(WORST_KEPT as u32 + 5) {
        // Frame 7 is the slowest, and lays out 40 rows; the others 3.
        let (duration, rows) = if i == 7 {
            (50.0, 40)
        } else {
            (f64::from(i), 3)
        };
        frame(16.0 * f64::from(i), duration, rows);
    }
    let frames = take().frames.expect("frames");
    assert_eq!(frames.durations_ms.len(), WORST_KEPT + 5);
    assert_eq!(frames.worst.len(), WORST_KEPT);
    let slowest = &frames.worst[0];
    assert_eq!((slowest.index, slowest.duration_ms), (7, 50.0));
    let calls: Vec<u64> = slowest.nodes.iter().map(|n| n.calls).collect();
    // draw once, row 40 times: that frame's calls alone.
    assert_eq!(calls, [1, 40]);
    assert!(
        frames
            .worst
            .windows(2)
            .all(|w| w[0].duration_ms >= w[1].duration_ms)
    );
    reset();
    assert!(take().frames.is_none());
}
