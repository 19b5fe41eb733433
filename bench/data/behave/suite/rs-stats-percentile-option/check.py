"""Check: compile a driver that includes the edited file as a module, run it; exit 0 when it behaves as asked."""

import subprocess
import sys
from pathlib import Path

PRELUDE = r"""
#[allow(dead_code, unused_imports, unused_variables)]
mod MODNAME;
#[allow(unused_imports)]
use MODNAME::*;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            println!($($msg)+);
            std::process::exit(1);
        }
    };
}

fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            String::from("(no message)")
        };
        println!("the code panicked: {}", msg.lines().next().unwrap_or(""));
        std::process::exit(1);
    }));
}
"""

DRIVER = r"""
fn close(a: Option<f64>, b: f64) -> bool {
    matches!(a, Some(x) if (x - b).abs() < 1e-9)
}

fn main() {
    install_hook();
    let empty: Option<f64> = percentile(&[], 50.0);
    check!(empty.is_none(), "percentile of no samples is not None");
    let v = [4.0, 1.0, 3.0, 2.0];
    check!(close(percentile(&v, 50.0), 2.5), "percentile([4,1,3,2], 50) is not Some(2.5)");
    check!(close(percentile(&v, 0.0), 1.0), "percentile(v, 0) is not Some(1.0)");
    check!(close(percentile(&v, 100.0), 4.0), "percentile(v, 100) is not Some(4.0)");
    check!(close(percentile(&v, 150.0), 4.0), "percentile(v, 150) is no longer clamped");
    check!(close(percentile(&[7.0], 95.0), 7.0), "percentile of one sample is not that sample");
    let samples: Vec<f64> = (1..=100).map(|i| i as f64).collect();
    let s = summarize(&samples);
    check!(s.is_some(), "summarize of 100 samples is None");
    let s = s.unwrap();
    check!(s.count == 100 && s.min == 1.0 && s.max == 100.0, "summarize count/min/max changed");
    check!((s.p50 - 50.5).abs() < 1e-9 && (s.p95 - 95.05).abs() < 1e-9 && (s.p99 - 99.01).abs() < 1e-9, "summarize percentiles changed");
    check!(summarize(&[]).is_none(), "summarize of no samples is not None");
    check!(format_summary(&s) == "n=100 min=1.0 p50=50.5 p95=95.0 p99=99.0 max=100.0", "format_summary changed: {}", format_summary(&s));
    check!(mean(&[]).is_none() && close(mean(&v), 2.5), "mean changed");
    println!("OK");
}
"""


def main() -> int:
    path = Path(sys.argv[1]).resolve()
    tmp = path.parent
    driver = tmp / "check_driver.rs"
    driver.write_text(PRELUDE.replace("MODNAME", path.stem) + DRIVER, encoding="utf-8")
    binary = tmp / "check_driver_bin"
    try:
        built = subprocess.run(
            ["rustc", "--edition", "2021", "-A", "warnings", "-C", "debuginfo=0",
             "-o", str(binary), str(driver)],
            capture_output=True, text=True, timeout=120, cwd=tmp,
        )
    except subprocess.TimeoutExpired:
        print("rustc ran over 120 s")
        return 1
    if built.returncode != 0:
        errors = [line for line in built.stderr.splitlines() if line.startswith("error")]
        print("does not compile: " + (errors[0] if errors else built.stderr.strip()[:200]))
        return 1
    try:
        done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=20, cwd=tmp)
    except subprocess.TimeoutExpired:
        print("the driver ran over 20 s")
        return 1
    out = done.stdout.strip().splitlines()
    if done.returncode == 0 and out and out[-1] == "OK":
        return 0
    print(out[0] if out else f"the driver exited with {done.returncode}: {done.stderr.strip()[:200]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
