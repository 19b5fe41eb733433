"""Check for ho-rs-frame-partial-panic: a partly arrived frame is an error the reader waits on, not a panic."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
#[path = "frame.rs"]
mod frame;
use frame::*;
use std::panic::{self, AssertUnwindSafe};

fn bad(msg: String) -> ! {
    println!("{}", msg);
    std::process::exit(1);
}

// Feed `bytes` to a reader in pieces of `step` bytes; the frames it gives and how many errors.
fn read_all(bytes: &[u8], step: usize) -> (Vec<Frame>, usize, usize) {
    let mut r = FrameReader::new();
    let (mut frames, mut errors) = (Vec::new(), 0);
    for piece in bytes.chunks(step) {
        r.push(piece);
        loop {
            match panic::catch_unwind(AssertUnwindSafe(|| r.next_frame())) {
                Err(_) => bad(format!("FrameReader::next_frame panicked when fed {} bytes at a time", step)),
                Ok(Ok(Some(f))) => frames.push(f),
                Ok(Ok(None)) => break,
                Ok(Err(_)) => errors += 1,
            }
        }
    }
    (frames, errors, r.buffered())
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let f1 = Frame { kind: Kind::SetLevel, payload: vec![3, 200] };
    let f2 = Frame { kind: Kind::Status, payload: (0u8..40).collect() };
    let f3 = Frame { kind: Kind::Ping, payload: vec![] };
    let (b1, b2, b3) = (encode(&f1), encode(&f2), encode(&f3));
    for b in [&b1, &b2, &b3] {
        for cut in 0..b.len() {
            let part = &b[..cut];
            match panic::catch_unwind(|| decode(part)) {
                Err(_) => bad(format!("decode panics on the first {} of {} bytes of a frame", cut, b.len())),
                Ok(Ok(_)) => bad(format!("decode accepts the first {} of {} bytes of a frame", cut, b.len())),
                Ok(Err(_)) => {}
            }
        }
    }
    let mut more = b2.clone();
    more.extend_from_slice(&[0x7E, 0x01]);
    if decode(&more) != Ok((f2.clone(), b2.len())) {
        bad(format!("decode of a whole frame followed by more bytes gave {:?}", decode(&more)));
    }
    if decode(&[0x7E, 0x01, 0x07, 0xD0, 0]) != Err(FrameError::TooLong(2000)) {
        bad(format!("a too-long length gives {:?}, not TooLong", decode(&[0x7E, 0x01, 0x07, 0xD0, 0])));
    }
    if decode(&[0x7E, 0x55, 0, 0, 0xAB]) != Err(FrameError::UnknownKind(0x55)) || decode(&[0x13, 0x01, 0, 0]) != Err(FrameError::BadStart(0x13)) {
        bad("UnknownKind or BadStart changed".to_string());
    }
    let mut corrupt = b2.clone();
    corrupt[9] ^= 0x40;
    if !matches!(decode(&corrupt), Err(FrameError::BadChecksum { .. })) {
        bad(format!("a corrupted frame gives {:?}", decode(&corrupt)));
    }

    let mut stream = b1.clone();
    stream.extend_from_slice(&b2);
    stream.extend_from_slice(&b3);
    for step in [1, 2, 3, 5, 8, 13, stream.len()] {
        let (frames, errors, left) = read_all(&stream, step);
        if frames != vec![f1.clone(), f2.clone(), f3.clone()] || errors != 0 || left != 0 {
            bad(format!("fed {} bytes at a time, the reader gave {} frames, {} errors, {} bytes left", step, frames.len(), errors, left));
        }
    }
    let mut noisy = vec![0x00, 0x13, 0x7E, 0x01, 0x07, 0xD0];
    noisy.extend_from_slice(&b1);
    noisy.extend_from_slice(&corrupt);
    noisy.extend_from_slice(&b3);
    for step in [1, 4, noisy.len()] {
        let (frames, errors, left) = read_all(&noisy, step);
        if frames != vec![f1.clone(), f3.clone()] || errors == 0 || left != 0 {
            bad(format!("with noise on the bus ({} bytes at a time) the reader gave {} frames, {} errors, {} bytes left", step, frames.len(), errors, left));
        }
    }
    println!("ok");
}
"""


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def run(cmd, cwd):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{cmd[0]} timed out")


def first_error(text: str) -> str:
    lines = text.strip().splitlines() or ["?"]
    return next((l for l in lines if l.startswith("error")), lines[0])


def main() -> None:
    src = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(src, Path(tmp) / "frame.rs")
        (Path(tmp) / "driver.rs").write_text(DRIVER, encoding="utf-8")
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "driver.rs", "-o", "driver"], tmp)
        if done.returncode != 0:
            fail(f"does not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "driver")], tmp)
        if done.returncode != 0 or done.stdout.strip().splitlines()[-1:] != ["ok"]:
            fail((done.stdout.strip().splitlines() or [f"driver exited {done.returncode}"])[-1])
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "--test", "frame.rs", "-o", "unit"], tmp)
        if done.returncode != 0:
            fail(f"the file's tests do not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "unit")], tmp)
        if done.returncode != 0:
            bad = [l for l in done.stdout.splitlines() if l.endswith("FAILED")]
            fail(f"the file's own tests fail: {bad[0] if bad else done.returncode}")
    print("ok")


main()
