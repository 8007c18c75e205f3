//! The interval markers of `--format firefox`: what has a span. A page's
//! slowest animation frames and an HTTP handler's requests where they ran;
//! a test run's tests over their paths on the time track, which is laid
//! out, not in time. Each carries its exact calls or its status and its
//! measured time as fields the viewer shows.

use fxprof_processed_profile::{
    CategoryHandle, MarkerFieldFlags, MarkerFieldFormat, MarkerTiming, Profile as FxProfile,
    StaticSchemaMarker, StaticSchemaMarkerField, StringHandle, ThreadHandle,
};

use super::{Categories, at, laid_out_roots};
use crate::profile::{Profile, Requests};
use crate::report::stacks::Stacks;

/// A field of exact calls, which two markers carry.
const CALLS: StaticSchemaMarkerField = StaticSchemaMarkerField {
    key: "calls",
    label: "Instrumented calls (exact)",
    format: MarkerFieldFormat::Integer,
    flags: MarkerFieldFlags::empty(),
};

/// Each test of a test run (a test function, entered at the root) as an
/// interval marker over its path on the time track, where it is laid out.
pub(super) fn tests(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    stacks: &Stacks,
    view: &Profile,
    categories: &Categories,
) {
    for (node, start) in laid_out_roots(stacks) {
        let frame = &stacks.frames[node];
        let is_test = frame
            .function
            .and_then(|f| view.functions.get(f))
            .is_some_and(|f| f.is_test);
        if !is_test {
            continue;
        }
        let marker = TestCase {
            name: fx.intern_string(if frame.open {
                "Test (did not return)"
            } else {
                "Test"
            }),
            test: fx.intern_string(&frame.name),
            category: categories.of(frame.time),
            calls: frame.calls.unwrap_or(0),
            duration_ms: frame.inclusive / 1e6,
        };
        let timing = MarkerTiming::Interval(at(start), at(start + frame.inclusive));
        fx.add_marker(thread, timing, marker);
    }
}

/// One test of a test run, with its calls and time.
struct TestCase {
    name: StringHandle,
    test: StringHandle,
    category: CategoryHandle,
    calls: u64,
    duration_ms: f64,
}

impl StaticSchemaMarker for TestCase {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "WasmprofTestCase";
    const DESCRIPTION: Option<&'static str> =
        Some("A test of the run, over its calls on the time track (laid out, not in time)");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.test}");
    const TOOLTIP_LABEL: Option<&'static str> =
        Some("{marker.data.test}: {marker.data.calls} calls");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.data.test}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField {
            key: "test",
            label: "Test",
            format: MarkerFieldFormat::String,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        CALLS,
        StaticSchemaMarkerField {
            key: "duration",
            label: "Time (as the track's category says)",
            format: MarkerFieldFormat::Milliseconds,
            flags: MarkerFieldFlags::empty(),
        },
    ];

    fn name(&self, _: &mut FxProfile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut FxProfile) -> CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        self.test
    }

    fn number_field_value(&self, field_index: u32) -> f64 {
        match field_index {
            1 => self.calls as f64,
            _ => self.duration_ms,
        }
    }
}

/// One request an HTTP handler was served.
struct Request {
    name: StringHandle,
    path: StringHandle,
    category: CategoryHandle,
    number: u64,
    status: u16,
    latency_ms: f64,
}

impl StaticSchemaMarker for Request {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "WasmprofHttpRequest";
    const DESCRIPTION: Option<&'static str> =
        Some("A request the handler was served, from its call to its response's last byte");
    const CHART_LABEL: Option<&'static str> = Some("{marker.data.number}: {marker.data.status}");
    const TOOLTIP_LABEL: Option<&'static str> =
        Some("request {marker.data.number} to {marker.data.path}: {marker.data.status}");
    const TABLE_LABEL: Option<&'static str> =
        Some("request {marker.data.number} to {marker.data.path}: {marker.data.status}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField {
            key: "path",
            label: "Path",
            format: MarkerFieldFormat::String,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        StaticSchemaMarkerField {
            key: "number",
            label: "Request",
            format: MarkerFieldFormat::Integer,
            flags: MarkerFieldFlags::empty(),
        },
        StaticSchemaMarkerField {
            key: "status",
            label: "Status",
            format: MarkerFieldFormat::Integer,
            flags: MarkerFieldFlags::empty(),
        },
        StaticSchemaMarkerField {
            key: "latency",
            label: "Latency (measured)",
            format: MarkerFieldFormat::Milliseconds,
            flags: MarkerFieldFlags::empty(),
        },
    ];

    fn name(&self, _: &mut FxProfile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut FxProfile) -> CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        self.path
    }

    fn number_field_value(&self, field_index: u32) -> f64 {
        match field_index {
            1 => self.number as f64,
            2 => f64::from(self.status),
            _ => self.latency_ms,
        }
    }
}

/// Each request as an interval marker, from its handler's call (from the
/// start of serving) for its latency.
pub(super) fn requests(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    requests: &Requests,
    categories: &Categories,
) {
    let served = requests.start_nanos.iter().zip(&requests.latency_nanos);
    for (index, (&start, &latency)) in served.enumerate() {
        let marker = Request {
            name: fx.intern_string("HTTP request"),
            path: fx.intern_string(&requests.path),
            category: categories.measured,
            number: index as u64 + 1,
            status: requests.statuses.get(index).copied().unwrap_or(0),
            latency_ms: latency as f64 / 1e6,
        };
        let timing = MarkerTiming::Interval(at(start as f64), at((start + latency) as f64));
        fx.add_marker(thread, timing, marker);
    }
}

/// One of the page's slowest animation frames, with what ran in it.
struct AnimationFrame {
    name: StringHandle,
    category: CategoryHandle,
    index: u64,
    calls: u64,
    duration_ms: f64,
}

impl StaticSchemaMarker for AnimationFrame {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "WasmprofAnimationFrame";
    const DESCRIPTION: Option<&'static str> =
        Some("One of the page's slowest animation frames, measured by wasmprof");
    const CHART_LABEL: Option<&'static str> = Some("frame {marker.data.index}");
    const TOOLTIP_LABEL: Option<&'static str> =
        Some("frame {marker.data.index}: {marker.data.calls} calls");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[
        StaticSchemaMarkerField {
            key: "index",
            label: "Frame",
            format: MarkerFieldFormat::Integer,
            flags: MarkerFieldFlags::SEARCHABLE,
        },
        CALLS,
        StaticSchemaMarkerField {
            key: "duration",
            label: "Callback time (measured)",
            format: MarkerFieldFormat::Milliseconds,
            flags: MarkerFieldFlags::empty(),
        },
    ];

    fn name(&self, _: &mut FxProfile) -> StringHandle {
        self.name
    }

    fn category(&self, _: &mut FxProfile) -> CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _: u32) -> StringHandle {
        self.name
    }

    fn number_field_value(&self, field_index: u32) -> f64 {
        match field_index {
            0 => self.index as f64,
            1 => self.calls as f64,
            _ => self.duration_ms,
        }
    }
}

/// The slowest animation frames as interval markers, where they ran.
pub(super) fn animation_frames(
    fx: &mut FxProfile,
    thread: ThreadHandle,
    profile: &Profile,
    categories: &Categories,
) {
    let Some(frames) = &profile.frames else {
        return;
    };
    for frame in &frames.worst {
        let marker = AnimationFrame {
            name: fx.intern_string("Animation frame"),
            category: categories.frames,
            index: frame.index,
            calls: frame.calls.iter().map(|c| c.calls).sum(),
            duration_ms: frame.duration_nanos / 1e6,
        };
        let timing = MarkerTiming::Interval(
            at(frame.start_nanos),
            at(frame.start_nanos + frame.duration_nanos),
        );
        fx.add_marker(thread, timing, marker);
    }
}
