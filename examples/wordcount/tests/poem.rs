//! The binary's job on the package's own file, as an integration test.

#[test]
fn the_poem_has_four_lines_and_twenty_eight_words() {
    let text = wordcount::read_input(Some("poem.txt")).unwrap();
    assert_eq!(wordcount::count(&text, 1, false), (4, 28));
}

#[test]
fn long_words_of_the_poem() {
    let text = wordcount::read_input(Some("poem.txt")).unwrap();
    assert_eq!(wordcount::count(&text, 4, false), (4, 18));
}
