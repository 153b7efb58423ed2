use picomcp::ToolArgs;

struct Plain {
    _x: u8,
}

#[derive(ToolArgs)]
struct Args {
    inner: Plain,
}

fn main() {}
