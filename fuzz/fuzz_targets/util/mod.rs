//! Small reference implementations the targets check picomcp against. They
//! are deliberately naive: obviously right rather than fast.
#![allow(dead_code)]

/// One frame as a plain line splitter sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line that fits, without its `\n` and one trailing `\r`.
    Line(Vec<u8>),
    /// A line that does not fit a buffer of the given size.
    Overflow,
}

/// Split `input` into lines for a buffer of `cap` bytes: a line's message is
/// the line without its `\n` and one `\r` before it (or, for a last line
/// without `\n`, one `\r` at the end of input); it fits when it has at most
/// `cap` bytes; an empty last line is no line at all.
pub fn reference_frames(input: &[u8], cap: usize) -> Vec<Frame> {
    let parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let mut frames = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let terminated = i + 1 < parts.len();
        if !terminated && part.is_empty() {
            break;
        }
        let message = part.strip_suffix(b"\r").unwrap_or(part);
        if message.len() <= cap {
            frames.push(Frame::Line(message.to_vec()));
        } else {
            frames.push(Frame::Overflow);
        }
    }
    frames
}

/// JSON insignificant whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Deepest nesting of `[`/`{` outside strings (an upper bound of the real
/// depth for any input, exact for valid JSON).
pub fn max_depth_outside_strings(input: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    max = max.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    max
}

fn hex4(input: &[u8], at: usize) -> Option<u32> {
    let digits = input.get(at..at + 4)?;
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// Whether a string in `input` (JSON that is otherwise well-formed) holds a
/// `\u` surrogate escape that is not a high+low pair.
pub fn has_lone_surrogate(input: &[u8]) -> bool {
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if input.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(input, i + 2) else {
                    return false; // not well-formed: not our question
                };
                match unit {
                    0xD800..=0xDBFF => {
                        let pair = input.get(i + 6..i + 8) == Some(b"\\u")
                            && hex4(input, i + 8).is_some_and(|lo| (0xDC00..=0xDFFF).contains(&lo));
                        if !pair {
                            return true;
                        }
                        i += 12;
                    }
                    0xDC00..=0xDFFF => return true,
                    _ => i += 6,
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    false
}
