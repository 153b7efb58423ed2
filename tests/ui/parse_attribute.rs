// `#[mcp(parse)]` builds what serde's derive builds: it refuses serde items
// it does not follow (on a field: `alias`, `default = "path"`, `flatten`;
// on the container: `default`), types without a derived check, other
// derives, and nested types without a derived parse of their own.
use picomcp::{ToolArgs, ToolOutput};

#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
struct Aliased<'a> {
    #[serde(alias = "name")]
    title: &'a str,
}

fn five() -> u8 {
    5
}

#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
struct Defaulted {
    #[serde(default = "five")]
    n: u8,
}

#[derive(serde::Deserialize)]
struct Extra {
    m: u8,
}

#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
struct Flattened {
    n: u8,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(ToolArgs, serde::Deserialize, Default)]
#[mcp(parse)]
#[serde(default)]
struct ContainerDefault {
    n: u8,
}

#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
struct Constrained {
    #[mcp(maximum = 3)]
    n: u8,
}

#[derive(ToolOutput)]
#[mcp(parse)]
struct Output {
    n: u8,
}

#[derive(ToolArgs, serde::Deserialize)]
struct Inner {
    n: u8,
}

#[derive(ToolArgs, serde::Deserialize)]
#[mcp(parse)]
struct Outer {
    inner: Inner,
}

fn main() {}
