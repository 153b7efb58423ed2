use std::collections::HashMap;

use picomcp::ToolOutput;

#[derive(ToolOutput)]
struct Out<'a> {
    counts: HashMap<&'a str, u32>,
}

fn main() {}
