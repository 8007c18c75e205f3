//! gprof's "Index by function name": every entry's `[index]`, by name.
//!
//! The layout is binutils' `cg_print_index`: three columns of 26 characters
//! filled top to bottom, whole cycles after the functions. Rust paths are
//! usually longer than a column, and gprof would then run the entries into
//! each other, so such an index gets one entry per line instead.

use super::GprofWriter;

/// gprof's `(output_width - 1) / 3` for its default width of 80.
const COLUMN_WIDTH: usize = 26;
const COLUMNS: usize = 3;

pub(super) fn write(report: &GprofWriter, text: &mut String) {
    text.push_str("Index by function name\n\n");
    text.push_str(&lay_out(&items(report)));
}

/// The rows of the index for `([index], label)` items in order.
fn lay_out(items: &[(String, String)]) -> String {
    let mut text = String::new();
    let fits = items
        .iter()
        .all(|(index, label)| index.len().max(5) + label.len() < COLUMN_WIDTH);
    let rows = if fits {
        items.len().div_ceil(COLUMNS)
    } else {
        items.len()
    };
    for row in 0..rows {
        let mut line = String::new();
        // As in gprof, `column` counts the index, its padding and the label
        // but not the two spaces around the index.
        let mut column = 0;
        let mut column_start = 0;
        for (index, label) in items.iter().skip(row).step_by(rows) {
            column += index.len();
            while column < column_start + 5 {
                line.push(' ');
                column += 1;
            }
            line.push_str(&format!(" {index} {label}"));
            column += label.len();
            column_start += COLUMN_WIDTH;
        }
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// `([index], label)` for every function with an entry, by name, then for
/// every cycle, by number.
fn items(report: &GprofWriter) -> Vec<(String, String)> {
    let graph = &report.graph;
    let mut functions: Vec<(usize, usize)> = report
        .numbering
        .function
        .iter()
        .enumerate()
        .filter_map(|(function, index)| index.map(|i| (function, i)))
        .collect();
    functions.sort_by(|&(a, _), &(b, _)| {
        graph.functions[a]
            .name
            .cmp(&graph.functions[b].name)
            .then(a.cmp(&b))
    });
    let cycles = graph.cycles.iter().enumerate().map(|(position, cycle)| {
        (
            format!("[{}]", report.numbering.cycle[position]),
            format!("<cycle {}>", cycle.number),
        )
    });
    functions
        .into_iter()
        .map(|(function, index)| (format!("[{index}]"), graph.functions[function].name.clone()))
        .chain(cycles)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(pairs: &[(usize, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|&(i, label)| (format!("[{i}]"), label.to_owned()))
            .collect()
    }

    fn reference_index(name: &str) -> String {
        let path = format!("{}/tests/data/gnu-gprof/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).expect("reference file");
        let start = text.find("Index by function name\n\n").expect("an index") + 24;
        text[start..].to_owned()
    }

    #[test]
    fn three_columns_exactly_as_gnu_gprof() {
        let appendix_b = items(&[
            (2, "add"),
            (4, "f_half"),
            (5, "f_half_2"),
            (6, "f_main_1"),
            (7, "f_main_2"),
            (8, "f_main_3"),
            (9, "f_main_4"),
            (3, "f_quarter"),
            (1, "frame_dummy"),
        ]);
        assert_eq!(
            lay_out(&appendix_b),
            reference_index("appendix-b.gnu-gprof.txt")
        );
        let recursion = items(&[(4, "fib"), (2, "is_even"), (3, "is_odd"), (1, "<cycle 1>")]);
        assert_eq!(
            lay_out(&recursion),
            reference_index("recursion.gnu-gprof.txt")
        );
    }

    #[test]
    fn long_names_get_a_line_each() {
        let long = items(&[
            (1, "my_crate::parser::Parser::parse_expression"),
            (2, "short"),
        ]);
        assert_eq!(
            lay_out(&long),
            "   [1] my_crate::parser::Parser::parse_expression\n   [2] short\n"
        );
    }

    #[test]
    fn an_empty_index_has_no_rows() {
        assert_eq!(lay_out(&[]), "");
    }
}
