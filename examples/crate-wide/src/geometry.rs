//! Inherent methods, associated functions, trait impls and a trait default
//! method, in a file module.

pub trait Shape {
    fn area(&self) -> f64;

    /// A default method: reported as `Shape::describe`, whichever type
    /// calls it.
    fn describe(&self) -> String {
        let area = self.area();
        format!("a shape of area {area:.1}")
    }
}

pub struct Circle {
    radius: f64,
}

impl Circle {
    /// An associated function without `self`: still `Circle::new`.
    pub fn new(radius: f64) -> Circle {
        let radius = radius.abs();
        Circle { radius }
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        let r = self.radius;
        std::f64::consts::PI * r * r
    }
}

pub struct Square {
    side: f64,
}

impl Square {
    pub fn new(side: f64) -> Square {
        Square { side }
    }
}

impl Shape for Square {
    fn area(&self) -> f64 {
        let side = self.side;
        side * side
    }
}
