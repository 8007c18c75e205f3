//! Not included by the patterns; an explicit annotation still counts.

pub fn show(total: u64) {
    let line = format!("opt-in: total {total}");
    println!("{line}");
    footer();
}

#[wasmprof::instrument]
fn footer() {
    println!("opt-in: done");
}
