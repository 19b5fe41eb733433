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
fn ok_cut(full: &str, got: &str, max: usize) -> bool {
    if full.len() <= max {
        return got == full;
    }
    !got.is_empty() && got.len() <= max && full.starts_with(got) && !got.ends_with('-')
}

fn main() {
    install_hook();
    check!(slugify("Hello, World!", 60) == "hello-world", "slugify(\"Hello, World!\", 60) is not hello-world");
    check!(slugify("Crème brûlée -- the recipe", 100) == "creme-brulee-the-recipe", "slugify no longer folds accents or joins words");
    check!(slugify("  ", 10) == "", "slugify of blanks is not empty");
    let cases: [(&str, &str, usize); 5] = [
        ("Hello World Again", "hello-world-again", 12),
        ("Hello World Again", "hello-world-again", 11),
        ("abc def", "abc-def", 5),
        ("Ten Tips For Writing Rust That Reads Well", "ten-tips-for-writing-rust-that-reads-well", 20),
        ("Exactly ten", "exactly-ten", 11),
    ];
    for (title, full, max) in cases {
        let got = slugify(title, max);
        check!(ok_cut(full, &got, max), "slugify({:?}, {}) gives {:?}", title, max, got);
        check!(got.is_empty() || is_slug(&got), "slugify({:?}, {}) gives a malformed slug {:?}", title, max, got);
    }
    let long = "A very long title about the many ways of configuring a reverse proxy in front of a small web application";
    let path = post_path((2024, 3, 9), long);
    check!(path.starts_with("/2024/03/09/a-very-long-title") && path.ends_with('/'), "post_path changed: {}", path);
    let slug_part = &path["/2024/03/09/".len()..path.len() - 1];
    check!(slug_part.len() <= 60 && is_slug(slug_part), "post_path does not cap the slug at 60: {}", path);
    check!(post_path((2024, 3, 9), "Hello, World!") == "/2024/03/09/hello-world/", "post_path of a short title changed");
    let mut taken = std::collections::HashSet::new();
    taken.insert(String::from("hello-world"));
    check!(unique_slug("Hello world", &taken) == "hello-world-2", "unique_slug no longer appends -2");
    check!(unique_slug("!!!", &taken) == "post", "unique_slug of an empty slug is not post");
    let u = unique_slug(long, &taken);
    check!(u.len() <= 60 && is_slug(&u) && u.starts_with("a-very-long-title"), "unique_slug does not cap at 60: {}", u);
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
