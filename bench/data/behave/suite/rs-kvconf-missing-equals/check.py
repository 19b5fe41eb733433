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
fn main() {
    install_hook();
    let good = "# agent\nname = \"edge-01\"\n\n[server]\nport = 9100  # scrape port\ntimeout = 45\nbanner = \"a # b\"\n";
    let cfg = match parse(good) {
        Ok(c) => c,
        Err(e) => {
            println!("a valid file no longer parses: {e}");
            std::process::exit(1);
        }
    };
    check!(cfg.len() == 4, "a valid file gives {} keys, not 4", cfg.len());
    check!(cfg.get("name") == Some("edge-01"), "name is not edge-01");
    check!(cfg.get("server.port") == Some("9100"), "server.port is not 9100");
    check!(cfg.get("server.banner") == Some("a # b"), "a quoted # is no longer kept");
    check!(cfg.timeout_secs() == 45, "timeout_secs changed");

    let bad = "name = edge\ntimeout 45\nport = 1\n";
    match parse(bad) {
        Ok(_) => {
            println!("a line without '=' is still accepted");
            std::process::exit(1);
        }
        Err(ParseError::DuplicateKey { .. }) | Err(ParseError::EmptyKey { .. }) | Err(ParseError::BadSection { .. }) => {
            println!("a line without '=' gives the wrong kind of error");
            std::process::exit(1);
        }
        Err(_) => {}
    }
    check!(parse("[server]\njust-a-word\n").is_err(), "a bare word inside a section is still accepted");
    check!(parse("a = 1\n   \n# only a comment\n\n").is_ok(), "blank or comment-only lines are now rejected");
    check!(matches!(parse("= 3\n"), Err(ParseError::EmptyKey { line: 1 })), "an empty key is no longer reported");
    check!(matches!(parse("a = 1\na = 2\n"), Err(ParseError::DuplicateKey { line: 2, .. })), "a duplicate key is no longer reported");
    check!(matches!(parse("[server\n"), Err(ParseError::BadSection { line: 1 })), "a bad section is no longer reported");
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
