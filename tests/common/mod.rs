//! Shared test helpers: an in-memory transport and the bookshop server.
#![allow(dead_code)]

#[path = "../../examples/bookshop/src/shop.rs"]
pub mod shop;
pub mod twins;

use picomcp::Server;

/// The bookshop, as the example builds it.
pub static BOOKSHOP: Server<'static, shop::Shop> = shop::server();

/// Input bytes in, output bytes collected; reads `chunk` bytes at a time.
pub struct MemIo<'a> {
    pub input: &'a [u8],
    pub chunk: usize,
    pub output: Vec<u8>,
}

impl embedded_io::ErrorType for MemIo<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for MemIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.input.len()).min(self.chunk);
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl embedded_io::Write for MemIo<'_> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

// The same stream for the async loops (`ErrorType` is shared by both
// crates): every read and write ready at once.
impl embedded_io_async::Read for MemIo<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        embedded_io::Read::read(self, buf)
    }
}

impl embedded_io_async::Write for MemIo<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        embedded_io::Write::write(self, buf)
    }

    async fn flush(&mut self) -> Result<(), Self::Error> {
        embedded_io::Write::flush(self)
    }
}

/// Serve `input` through `server` with the given buffer sizes; the output lines.
pub fn serve_with<S>(
    server: &Server<'_, S>,
    input: &[u8],
    in_cap: usize,
    out_cap: usize,
    chunk: usize,
) -> Vec<String> {
    let mut io = MemIo {
        input,
        chunk,
        output: Vec::new(),
    };
    let mut inb = vec![0u8; in_cap];
    let mut outb = vec![0u8; out_cap];
    picomcp::transport::serve(server, &mut io, &mut inb, &mut outb).unwrap();
    let text = String::from_utf8(io.output).expect("output is UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "output ends with a newline"
    );
    text.lines().map(str::to_owned).collect()
}

/// Serve through the bookshop with roomy buffers.
pub fn bookshop(input: &str) -> Vec<String> {
    serve_with(&BOOKSHOP, input.as_bytes(), 64 * 1024, 16 * 1024, 4096)
}

/// An `initialize` line for a version.
pub fn init(version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

/// `initialize` (2025-11-25) + `initialized`, then `lines`; returns the
/// answers after the initialize result.
pub fn session(lines: &[&str]) -> Vec<String> {
    session_v("2025-11-25", lines)
}

/// Like [`session`] at a given version.
pub fn session_v(version: &str, lines: &[&str]) -> Vec<String> {
    let mut input = init(version);
    input.push('\n');
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for l in lines {
        input.push_str(l);
        input.push('\n');
    }
    let mut out = bookshop(&input);
    assert!(
        out[0].contains("\"result\""),
        "initialize failed: {}",
        out[0]
    );
    out.remove(0);
    out
}

/// An `initialize` request declaring `capabilities` (a JSON object).
pub fn init_with(version: &str, capabilities: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
}

/// `conn` made ready with `server`: `initialize` at `version`, then
/// `notifications/initialized` (the answers are dropped).
pub fn ready_at<S>(server: &Server<'_, S>, conn: &mut picomcp::Connection, version: &str) {
    let mut out = [0u8; 1024];
    for line in [
        init(version),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
    ] {
        let mut frame = line.into_bytes();
        let _ = server.handle(conn, &mut frame, &mut out);
    }
}

/// A tool that asks for the client's roots, once per round, `rounds` times,
/// then answers how many roots the last answer had.
pub fn roots_tool<'a>(
    _: &'a (),
    args: picomcp::tool::Arguments<'a>,
    reply: picomcp::tool::Reply<'_>,
) -> picomcp::tool::ToolOutcome<'a> {
    #[derive(serde::Deserialize)]
    struct Args {
        rounds: u8,
    }
    let Args { rounds } = args.parse()?;
    let done = reply.request_state().map_or(0, |s| s[0]);
    if done >= rounds {
        let roots = roots_in(reply.input_response("roots"));
        return reply.text_fmt(format_args!("{roots} roots after {done} rounds"));
    }
    let mut ask = reply.input_required();
    ask.roots("roots").state(&[done + 1]);
    ask.finish()
}

/// How many roots a `roots/list` answer lists (0 without one).
pub fn roots_in(answer: Option<picomcp::mrtr::InputResponse<'_>>) -> usize {
    answer
        .and_then(|r| r.value().get("roots"))
        .map_or(0, |r| r.len())
}
