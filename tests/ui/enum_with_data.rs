use picomcp::ToolArgs;

#[derive(ToolArgs)]
enum Shape {
    Circle,
    Square(u32),
}

fn main() {}
