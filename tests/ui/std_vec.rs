use picomcp::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    tags: Vec<u8>,
}

fn main() {}
