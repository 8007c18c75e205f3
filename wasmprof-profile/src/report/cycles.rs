//! Strongly connected components of the function call graph.
//!
//! gprof reports mutual recursion as a "cycle": a set of functions that can
//! all reach each other through calls. Those sets are exactly the strongly
//! connected components of the caller→callee graph, found here with Tarjan's
//! algorithm. The algorithm is written with an explicit stack rather than
//! recursion because a profile comes from an arbitrary program: a call chain
//! through a hundred thousand distinct functions must not overflow our stack.

/// The strongly connected components of a directed graph on `0..vertex_count`
/// given by its edges. Returns the component of every vertex; components are
/// numbered in the order Tarjan's algorithm completes them.
pub(super) fn strongly_connected_components(
    vertex_count: usize,
    edges: &[(usize, usize)],
) -> Vec<usize> {
    let successors = adjacency(vertex_count, edges);
    let mut state = Tarjan {
        index_of: vec![None; vertex_count],
        lowlink: vec![0; vertex_count],
        on_stack: vec![false; vertex_count],
        stack: Vec::new(),
        component_of: vec![usize::MAX; vertex_count],
        next_index: 0,
        next_component: 0,
    };
    for start in 0..vertex_count {
        if state.index_of[start].is_none() {
            state.visit_from(start, &successors);
        }
    }
    state.component_of
}

/// Successor lists, each sorted and without duplicates so that the
/// numbering of components does not depend on the order of `edges`.
fn adjacency(vertex_count: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); vertex_count];
    for &(from, to) in edges {
        successors[from].push(to);
    }
    for list in &mut successors {
        list.sort_unstable();
        list.dedup();
    }
    successors
}

struct Tarjan {
    index_of: Vec<Option<usize>>,
    lowlink: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    component_of: Vec<usize>,
    next_index: usize,
    next_component: usize,
}

impl Tarjan {
    fn discover(&mut self, vertex: usize) {
        self.index_of[vertex] = Some(self.next_index);
        self.lowlink[vertex] = self.next_index;
        self.next_index += 1;
        self.stack.push(vertex);
        self.on_stack[vertex] = true;
    }

    /// Depth-first search from `start`; each frame of `work` is a vertex and
    /// the position of the next successor to look at.
    fn visit_from(&mut self, start: usize, successors: &[Vec<usize>]) {
        self.discover(start);
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some(frame) = work.last_mut() {
            let (vertex, position) = *frame;
            if let Some(&next) = successors[vertex].get(position) {
                frame.1 += 1;
                match self.index_of[next] {
                    None => {
                        self.discover(next);
                        work.push((next, 0));
                    }
                    Some(index) if self.on_stack[next] => {
                        self.lowlink[vertex] = self.lowlink[vertex].min(index);
                    }
                    Some(_) => {}
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                self.lowlink[parent] = self.lowlink[parent].min(self.lowlink[vertex]);
            }
            if Some(self.lowlink[vertex]) == self.index_of[vertex] {
                self.close_component(vertex);
            }
        }
    }

    fn close_component(&mut self, root: usize) {
        while let Some(member) = self.stack.pop() {
            self.on_stack[member] = false;
            self.component_of[member] = self.next_component;
            if member == root {
                break;
            }
        }
        self.next_component += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(components: &[usize], a: usize, b: usize) -> bool {
        components[a] == components[b]
    }

    #[test]
    fn a_chain_has_no_cycle() {
        let c = strongly_connected_components(3, &[(0, 1), (1, 2)]);
        assert!(!same(&c, 0, 1) && !same(&c, 1, 2) && !same(&c, 0, 2));
    }

    #[test]
    fn mutual_recursion_is_one_component() {
        // main → even ⇄ odd, main → fib ↺
        let c = strongly_connected_components(4, &[(0, 1), (1, 2), (2, 1), (0, 3), (3, 3)]);
        assert!(same(&c, 1, 2));
        assert!(!same(&c, 0, 1) && !same(&c, 3, 1) && !same(&c, 0, 3));
    }

    #[test]
    fn two_cycles_joined_by_an_edge_stay_apart() {
        let c = strongly_connected_components(4, &[(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)]);
        assert!(same(&c, 0, 1) && same(&c, 2, 3) && !same(&c, 1, 2));
    }

    #[test]
    fn a_very_long_cycle_does_not_overflow_the_stack() {
        let n = 200_000;
        let edges: Vec<(usize, usize)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
        let c = strongly_connected_components(n, &edges);
        assert!(c.iter().all(|&x| x == c[0]));
        let chain: Vec<(usize, usize)> = (0..n - 1).map(|v| (v, v + 1)).collect();
        let c = strongly_connected_components(n, &chain);
        let mut distinct = c.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), n);
    }
}
