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
fn cfg(text: &str) -> Config {
    match parse(text) {
        Ok(c) => c,
        Err(e) => {
            println!("parse failed on a valid file: {e}");
            std::process::exit(1);
        }
    }
}

fn main() {
    install_hook();
    let port: u16 = cfg("name = a\n").port();
    check!(port == 8080, "port() without server.port gives {port}, not 8080");
    check!(cfg("").port() == 8080, "port() on an empty config is not 8080");
    check!(cfg("port = 9100\n").port() == 8080, "a top-level `port` (not server.port) is now used");
    check!(cfg("[server]\nport = 9100\n").port() == 9100, "server.port = 9100 no longer gives 9100");
    check!(cfg("[server]\nport = \"443\"\n").port() == 443, "a quoted port no longer works");
    check!(cfg("[server]\ntimeout = 5\n").timeout_secs() == 5, "timeout_secs changed");
    check!(cfg("[server]\ntimeout = x\n").timeout_secs() == 30, "timeout_secs default changed");
    check!(cfg("[server]\nlog = yes\n").get_bool("server.log") == Some(true), "get_bool changed");
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
