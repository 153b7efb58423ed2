use picomcp::ToolArgs;

#[derive(ToolArgs, serde::Deserialize)]
struct Args {
    #[mcp(rename = "type")]
    kind: u8,
}

fn main() {}
