#[wasmprof::instrument]
#[derive(Debug)]
pub struct Point {
    x: u32,
}

#[wasmprof::instrument]
enum Kind {
    A,
}

#[wasmprof::instrument]
static TOTAL: u32 = 0;

fn main() {
    println!("{:?} {}", Point { x: 1 }.x, TOTAL);
    let _ = Kind::A;
}
