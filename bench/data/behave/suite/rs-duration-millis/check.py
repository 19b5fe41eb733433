"""Check for rs-duration-millis: parse_duration accepts ms; the other units and errors are unchanged."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
#[path = "duration.rs"]
mod duration;
use duration::{format_duration, parse_duration, ParseError};
use std::time::Duration;

fn main() {
    let cases: Vec<(&str, Result<Duration, ParseError>)> = vec![
        ("250ms", Ok(Duration::from_millis(250))),
        ("1s500ms", Ok(Duration::from_millis(1_500))),
        ("2m5ms", Ok(Duration::from_millis(120_005))),
        ("0ms", Ok(Duration::ZERO)),
        ("1m", Ok(Duration::from_secs(60))),
        ("1h30m", Ok(Duration::from_secs(5_400))),
        ("1w2d", Ok(Duration::from_secs(777_600))),
        (" 45s ", Ok(Duration::from_secs(45))),
        ("", Err(ParseError::Empty)),
        ("ms", Err(ParseError::MissingNumber(0))),
        ("10", Err(ParseError::MissingUnit(2))),
        ("3y", Err(ParseError::UnknownUnit("y".to_string()))),
        ("5us", Err(ParseError::UnknownUnit("us".to_string()))),
        ("99999999999999999999999s", Err(ParseError::Overflow)),
    ];
    for (text, want) in cases {
        let got = parse_duration(text);
        if got != want {
            println!("parse_duration({:?}) = {:?}, expected {:?}", text, got, want);
            std::process::exit(1);
        }
    }
    let f = format_duration(Duration::from_secs(5_400));
    if f != "1h30m" {
        println!("format_duration(5400 s) = {:?}, expected \"1h30m\"", f);
        std::process::exit(1);
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
        shutil.copy(src, Path(tmp) / "duration.rs")
        (Path(tmp) / "driver.rs").write_text(DRIVER, encoding="utf-8")
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "driver.rs", "-o", "driver"], tmp)
        if done.returncode != 0:
            fail(f"does not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "driver")], tmp)
        if done.returncode != 0 or done.stdout.strip().splitlines()[-1:] != ["ok"]:
            fail((done.stdout.strip().splitlines() or [f"driver exited {done.returncode}"])[-1])
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "--test", "duration.rs", "-o", "unit"], tmp)
        if done.returncode != 0:
            fail(f"the file's tests do not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "unit")], tmp)
        if done.returncode != 0:
            bad = [l for l in done.stdout.splitlines() if l.endswith("FAILED")]
            fail(f"the file's own tests fail: {bad[0] if bad else done.returncode}")
    print("ok")


main()
