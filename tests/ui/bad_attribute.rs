use picomcp::ToolArgs;

#[derive(ToolArgs)]
struct Args<'a> {
    #[mcp(minimum = 1)]
    name: &'a str,
}

#[derive(ToolArgs)]
struct Typo {
    #[mcp(maximun = 1)]
    n: u8,
}

fn main() {}
