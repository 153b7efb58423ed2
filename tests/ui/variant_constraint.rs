use picomcp::ToolArgs;

#[derive(ToolArgs, serde::Deserialize)]
enum Size {
    #[mcp(minimum = 1)]
    Small,
    Large,
}

fn main() {}
