//! A serving thread with a small fixed stack: the `server` and `http`
//! targets run each input on it, so an input that made the core recurse
//! on its depth would overflow that stack and crash the run.
//!
//! The core never recurses on input depth, so a small stack must do for any
//! input. `PICOMCP_FUZZ_STACK=bytes` overrides a target's size (to find
//! the smallest that passes its corpus, say).

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// One thread that runs one input at a time, and waits for it.
pub struct Worker {
    jobs: SyncSender<Vec<u8>>,
    done: Receiver<()>,
}

impl Worker {
    /// Start the thread `name` with a `stack`-byte stack (unless
    /// `PICOMCP_FUZZ_STACK` says otherwise), running `run` on each input.
    /// A panic there ends the thread, and [`Worker::run`] then panics too
    /// (libFuzzer's hook reports the first).
    pub fn spawn(name: &str, stack: usize, mut run: impl FnMut(&[u8]) + Send + 'static) -> Self {
        let (jobs, inputs) = sync_channel::<Vec<u8>>(0);
        let (finished, done) = sync_channel::<()>(0);
        let stack = std::env::var("PICOMCP_FUZZ_STACK")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(stack);
        std::thread::Builder::new()
            .name(name.into())
            .stack_size(stack)
            .spawn(move || {
                for input in inputs {
                    run(&input);
                    drop(input);
                    if finished.send(()).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the serving thread");
        Worker { jobs, done }
    }

    /// Run `data` on the thread and wait until it is done.
    pub fn run(&self, data: &[u8]) {
        self.jobs.send(data.to_vec()).expect("serving thread alive");
        self.done.recv().expect("serving thread alive");
    }
}
