use picomcp::ToolArgs;

#[derive(ToolArgs)]
struct Args {
    point: (i32, i32),
}

fn main() {}
