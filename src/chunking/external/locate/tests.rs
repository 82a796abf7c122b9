use super::*;

fn doc(text: &str) -> Document {
    Document::new("d.md", text)
}

fn chunk(text: &str) -> ChunkOut {
    ChunkOut {
        text: text.into(),
        start: None,
        end: None,
    }
}

fn at(text: &str, start: i64, end: i64) -> ChunkOut {
    ChunkOut {
        text: text.into(),
        start: Some(start),
        end: Some(end),
    }
}

/// (byte_start, byte_end, added, how) of each placed chunk.
fn ranges(doc: &Document, chunks: &[ChunkOut]) -> Vec<Option<(usize, usize, String, Placement)>> {
    place(doc, chunks)
        .unwrap()
        .into_iter()
        .map(|p| p.map(|p| (p.byte_start, p.byte_end, p.added, p.how)))
        .collect()
}

#[test]
fn repeated_text_is_found_after_the_previous_chunk() {
    // "ab ab ab": the second "ab" chunk is the one at byte 3, the third at byte 6
    let d = doc("ab ab ab");
    let got = ranges(&d, &[chunk("ab"), chunk("ab"), chunk("ab")]);
    let starts: Vec<usize> = got.iter().map(|p| p.as_ref().unwrap().0).collect();
    assert_eq!(starts, [0, 3, 6]);
    assert!(
        got.iter()
            .all(|p| p.as_ref().unwrap().3 == Placement::Exact)
    );
}

#[test]
fn overlapping_chunks_are_found_where_they_start() {
    let d = doc("one two three four");
    let got = ranges(&d, &[chunk("one two three"), chunk("two three four")]);
    assert_eq!(
        got[0].as_ref().unwrap().0..got[0].as_ref().unwrap().1,
        0..13
    );
    assert_eq!(
        got[1].as_ref().unwrap().0..got[1].as_ref().unwrap().1,
        4..18
    );
}

#[test]
fn whitespace_is_forgiven_and_the_range_is_the_documents() {
    // the chunker joined two lines with one space; the range covers "alpha\n\n  beta"
    let d = doc("x\nalpha\n\n  beta\ny");
    let got = ranges(&d, &[chunk("alpha beta")]);
    let (s, e, added, how) = got[0].clone().unwrap();
    assert_eq!(&d.text[s..e], "alpha\n\n  beta");
    assert_eq!((added.as_str(), how), ("", Placement::Whitespace));
}

#[test]
fn a_prepended_title_is_the_chunks_added_prefix() {
    let d = doc("Refunds take five days.\nPartial refunds take ten.");
    let got = ranges(&d, &[chunk("Billing guide\n\nPartial refunds take ten.")]);
    let (s, e, added, how) = got[0].clone().unwrap();
    assert_eq!(&d.text[s..e], "Partial refunds take ten.");
    assert_eq!(
        (added.as_str(), how),
        ("Billing guide", Placement::AddedPrefix)
    );
}

#[test]
fn given_offsets_are_code_points_and_are_checked() {
    // "é" is two bytes: code points 2..5 are bytes 3..6
    let d = doc("aé bcd");
    let got = ranges(&d, &[at(" bc", 2, 5)]);
    assert_eq!(
        got[0].clone().unwrap(),
        (3, 6, String::new(), Placement::Given)
    );
    let wrong = place(&d, &[at("bcd", 0, 3)]).unwrap_err();
    assert_eq!(wrong, (0, PlaceError::Mismatch { start: 0, end: 3 }));
    let beyond = place(&d, &[at("bcd", 3, 9)]).unwrap_err();
    assert_eq!(
        beyond,
        (
            0,
            PlaceError::Beyond {
                start: 3,
                end: 9,
                len: 6
            }
        )
    );
}

#[test]
fn empty_and_out_of_order_chunks_are_errors() {
    let d = doc("first second");
    assert_eq!(
        place(&d, &[chunk("first"), chunk(" \n")]).unwrap_err(),
        (1, PlaceError::Empty)
    );
    let err = place(&d, &[at("second", 6, 12), at("first", 0, 5)]).unwrap_err();
    assert_eq!(
        err,
        (
            1,
            PlaceError::OutOfOrder {
                start: 0,
                previous: 6
            }
        )
    );
}

#[test]
fn a_chunk_found_nowhere_is_unlocated_not_an_error() {
    let d = doc("the real text");
    let got = ranges(
        &d,
        &[chunk("the real"), chunk("invented words"), chunk("text")],
    );
    assert!(got[1].is_none());
    assert_eq!(got[2].as_ref().unwrap().0, 9);
}

#[test]
fn a_chunk_found_only_before_the_previous_one_is_out_of_order() {
    let d = doc("first second third");
    let err = place(&d, &[chunk("third"), chunk("first")]).unwrap_err();
    assert_eq!(
        err,
        (
            1,
            PlaceError::OutOfOrder {
                start: 0,
                previous: 13
            }
        )
    );
}

#[test]
fn a_title_prefixed_chunk_far_into_a_long_line_is_found_near_the_previous_one() {
    // one line of 200 distinct words; each chunk is "t\n\n" + the next 5 words
    let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
    let d = doc(&words.join(" "));
    let chunks: Vec<ChunkOut> = words
        .chunks(5)
        .map(|w| chunk(&format!("t\n\n{}", w.join(" "))))
        .collect();
    let got = ranges(&d, &chunks);
    assert_eq!(got.len(), 40);
    for (i, p) in got.iter().enumerate() {
        let (s, e, added, how) = p.clone().unwrap();
        assert_eq!(&d.text[s..e], words[5 * i..5 * i + 5].join(" "));
        assert_eq!((added.as_str(), how), ("t", Placement::AddedPrefix));
    }
}
