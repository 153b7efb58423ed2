use picomcp::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    name: String,
}

fn main() {}
