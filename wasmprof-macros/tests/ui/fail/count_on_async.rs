#[wasmprof::instrument(count)]
pub async fn fetch(x: u32) -> u32 {
    x
}

fn main() {
    drop(fetch(1));
}
