use picomcp::PromptArgs;

#[derive(PromptArgs)]
struct Args<'a> {
    genre: &'a str,
    count: u32,
}

fn main() {}
