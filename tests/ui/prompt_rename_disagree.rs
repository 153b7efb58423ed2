use picomcp::PromptArgs;

#[derive(PromptArgs, serde::Deserialize)]
struct Args<'a> {
    #[serde(rename = "type")]
    #[mcp(rename = "kind")]
    kind: &'a str,
}

fn main() {}
