// A Rust program for the tracer: panics that unwind through the probed function (its frame
// holds a value with a destructor, so the unwinder runs its landing pad), caught by
// catch_unwind in the caller, on the main thread and on four more; one thread panics to its
// top and is joined as an error. It counts what it did (calls of work, their normal returns,
// the arguments, the results, the destructors run), so a test can compare the events with it.
use std::panic;
use std::sync::atomic::{AtomicI64, Ordering};
use std::thread;

static CALLS: AtomicI64 = AtomicI64::new(0);
static RETURNS: AtomicI64 = AtomicI64::new(0);
static PANICKED: AtomicI64 = AtomicI64::new(0);
static ARGUMENT_SUM: AtomicI64 = AtomicI64::new(0);
static RESULT_SUM: AtomicI64 = AtomicI64::new(0);
static DROPS: AtomicI64 = AtomicI64::new(0);

struct Guard;
impl Drop for Guard {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

#[inline(never)]
fn thrower(x: i64) -> i64 {
    if x % 5 == 3 {
        panic!("work({}) panics", x);
    }
    x * 3 + 1
}

// The probed function: Rust's ABI passes x in rdi and returns in rax on x86-64. Not mangled,
// so the probe can name it.
#[no_mangle]
#[inline(never)]
pub fn work(x: i64) -> i64 {
    let _guard = Guard;
    CALLS.fetch_add(1, Ordering::Relaxed);
    ARGUMENT_SUM.fetch_add(x, Ordering::Relaxed);
    let result = thrower(unsafe { std::ptr::read_volatile(&x) });
    RETURNS.fetch_add(1, Ordering::Relaxed);
    RESULT_SUM.fetch_add(result, Ordering::Relaxed);
    result
}

#[inline(never)]
fn calls(base: i64, count: i64) {
    for i in 0..count {
        if panic::catch_unwind(|| work(base + i)).is_err() {
            PANICKED.fetch_add(1, Ordering::Relaxed);
        }
    }
    work(base + count * 5); // the last call returns: no panicked frame is left on the stack
}

fn main() {
    panic::set_hook(Box::new(|_| {})); // the panics are expected: no message
    let count: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    calls(0, count);
    let threads: Vec<_> = (1..=4).map(|t| thread::spawn(move || calls(t * 100000, count))).collect();
    let mut joined = 0;
    for t in threads {
        if t.join().is_ok() {
            joined += 1;
        }
    }
    // A thread whose panic is not caught: it unwinds to the thread's top, join says so.
    let uncaught = thread::spawn(|| work(3)).join().is_err();
    if uncaught {
        PANICKED.fetch_add(1, Ordering::Relaxed);
    }
    println!("panics joined={} uncaught={}", joined, uncaught);
    println!(
        "work calls={} argument_sum={} result_sum={} returns={} panicked={} drops={}",
        CALLS.load(Ordering::Relaxed),
        ARGUMENT_SUM.load(Ordering::Relaxed),
        RESULT_SUM.load(Ordering::Relaxed),
        RETURNS.load(Ordering::Relaxed),
        PANICKED.load(Ordering::Relaxed),
        DROPS.load(Ordering::Relaxed)
    );
}
