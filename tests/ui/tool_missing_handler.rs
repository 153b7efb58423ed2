use picomcp::ToolArgs;
use picomcp::tool::Tool;

#[derive(ToolArgs, serde::Deserialize)]
struct Args {
    n: u8,
}

static TOOLS: &[Tool<()>] = &[picomcp::tool! { name: "t", args: Args }];

fn main() {}
