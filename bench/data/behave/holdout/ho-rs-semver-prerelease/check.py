"""Check for ho-rs-semver-prerelease: a pre-release orders before its release (semver
precedence); parsing, printing, core ordering, build metadata and `latest` still work."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
#[path = "semver.rs"]
mod semver;
use semver::{latest, ParseError, Version};
use std::cmp::Ordering;

fn v(text: &str) -> Version {
    match text.parse::<Version>() {
        Ok(ver) => ver,
        Err(e) => {
            println!("{:?} no longer parses: {:?}", text, e);
            std::process::exit(1);
        }
    }
}

fn expect(a: &str, b: &str, want: Ordering) {
    let (x, y) = (v(a), v(b));
    let got = x.cmp(&y);
    let back = y.cmp(&x);
    if got != want || back != want.reverse() || (x < y) != (want == Ordering::Less) || (x > y) != (want == Ordering::Greater) {
        println!("{} vs {} compares as {:?} (reverse {:?}), expected {:?}", a, b, got, back, want);
        std::process::exit(1);
    }
}

fn main() {
    use Ordering::*;
    expect("1.2.0-rc.1", "1.2.0", Less);
    expect("2.0.0", "2.0.0-alpha", Greater);
    expect("1.2.0-rc.1", "1.2.0-rc.2", Less);
    expect("1.0.0-beta", "1.0.0-alpha", Greater);
    expect("1.0.0-beta.2", "1.0.0-beta.11", Less);
    expect("1.0.0-alpha", "1.0.0-alpha.1", Less);
    expect("1.0.0-alpha.1", "1.0.0-alpha.beta", Less);
    expect("1.0.0", "1.0.1-alpha", Less);
    expect("2.0.0-rc.1", "1.9.9", Greater);
    expect("1.9.0", "1.10.0", Less);
    expect("1.0.0-rc.1+b1", "1.0.0-rc.1+b2", Equal);
    expect("1.0.0+x", "1.0.0", Equal);
    expect("3.1.4", "3.1.4", Equal);

    let spec = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"];
    for i in 0..spec.len() {
        for j in i + 1..spec.len() {
            expect(spec[i], spec[j], Less);
        }
    }
    let mut shuffled: Vec<Version> = ["1.0.0-rc.1", "1.0.0", "1.0.0-alpha.beta", "1.0.0-beta.11",
        "1.0.0-alpha", "1.0.0-beta.2", "1.0.0-alpha.1", "1.0.0-beta"].iter().map(|s| v(s)).collect();
    shuffled.sort();
    let sorted: Vec<String> = shuffled.iter().map(|x| x.to_string()).collect();
    if sorted != spec {
        println!("sorting gives {:?}", sorted);
        std::process::exit(1);
    }

    let all = [v("1.2.0"), v("1.2.0-rc.1"), v("1.1.0")];
    let got = latest(&all, true).map(|x| x.to_string());
    if got.as_deref() != Some("1.2.0") {
        println!("latest([1.2.0, 1.2.0-rc.1, 1.1.0], allow_pre) = {:?}, expected 1.2.0", got);
        std::process::exit(1);
    }
    let all = [v("1.2.0"), v("1.3.0-alpha.2"), v("1.2.7")];
    let with_pre = latest(&all, true).map(|x| x.to_string());
    let without = latest(&all, false).map(|x| x.to_string());
    if with_pre.as_deref() != Some("1.3.0-alpha.2") || without.as_deref() != Some("1.2.7") {
        println!("latest([1.2.0, 1.3.0-alpha.2, 1.2.7]) = {:?} / without pre-releases {:?}", with_pre, without);
        std::process::exit(1);
    }

    for text in ["1.0.0-alpha.beta+exp.sha.5114f85", "0.3.12", "10.20.30-rc-1.7"] {
        let shown = v(text).to_string();
        if shown != text {
            println!("{:?} prints as {:?}", text, shown);
            std::process::exit(1);
        }
    }
    if "1.2".parse::<Version>() != Err(ParseError::BadCore("1.2".to_string())) {
        println!("\"1.2\" is no longer rejected as BadCore");
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
        shutil.copy(src, Path(tmp) / "semver.rs")
        (Path(tmp) / "driver.rs").write_text(DRIVER, encoding="utf-8")
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "driver.rs", "-o", "driver"], tmp)
        if done.returncode != 0:
            fail(f"does not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "driver")], tmp)
        if done.returncode != 0 or done.stdout.strip().splitlines()[-1:] != ["ok"]:
            fail((done.stdout.strip().splitlines() or [f"driver exited {done.returncode}"])[-1])
        done = run(["rustc", "--edition", "2021", "-A", "warnings", "--test", "semver.rs", "-o", "unit"], tmp)
        if done.returncode != 0:
            fail(f"the file's tests do not compile: {first_error(done.stderr)}")
        done = run([str(Path(tmp) / "unit")], tmp)
        if done.returncode != 0:
            bad = [l for l in done.stdout.splitlines() if l.endswith("FAILED")]
            fail(f"the file's own tests fail: {bad[0] if bad else done.returncode}")
    print("ok")


main()
