trait Shape {
    #[wasmprof::instrument]
    fn area(&self) -> f64;
}

struct Square;

impl Shape for Square {
    fn area(&self) -> f64 {
        1.0
    }
}

fn main() {
    assert_eq!(Square.area(), 1.0);
}
