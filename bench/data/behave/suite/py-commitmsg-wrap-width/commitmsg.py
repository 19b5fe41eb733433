"""Format and lint git commit messages for the release bot.

A message is a subject line, an empty line, then a body of paragraphs that
the bot wraps; trailers such as ``Signed-off-by:`` are kept as they are.
"""

import re
import textwrap

SUBJECT_SOFT_LIMIT = 50
MAX_SUBJECT = 72
TRAILER_RE = re.compile(r"^[A-Z][A-Za-z-]+: .+$")


def split_message(message):
    """(subject, body) of a message; the body may be ''."""
    subject, _sep, body = message.strip("\n").partition("\n")
    return subject.strip(), body.strip("\n")


def is_trailer_block(paragraph):
    lines = paragraph.splitlines()
    return bool(lines) and all(TRAILER_RE.match(line) for line in lines)


def wrap_body(body, width=72):
    """The body with each prose paragraph re-wrapped to ``width`` columns.

    Paragraphs that look like lists, code (indented) or trailers are kept."""
    out = []
    for para in re.split(r"\n\s*\n", body.strip("\n")):
        first = para.lstrip()
        if para.startswith((" ", "\t")) or first.startswith(("- ", "* ")) or is_trailer_block(para):
            out.append(para)
        else:
            out.append(textwrap.fill(" ".join(para.split()), width=width))
    return "\n\n".join(out)


def format_message(subject, body="", width=72):
    """A complete message: subject, blank line, wrapped body."""
    subject = " ".join(subject.split())
    if subject.endswith("."):
        subject = subject[:-1]
    if not body.strip():
        return subject + "\n"
    return f"{subject}\n\n{wrap_body(body, width)}\n"


def lint(message):
    """A list of problems of ``message`` (empty when it is fine)."""
    problems = []
    subject, body = split_message(message)
    if not subject:
        problems.append("empty subject")
    elif len(subject) > MAX_SUBJECT:
        problems.append(f"subject longer than {MAX_SUBJECT} characters")
    elif len(subject) > SUBJECT_SOFT_LIMIT:
        problems.append(f"subject longer than {SUBJECT_SOFT_LIMIT} characters (soft limit)")
    if subject.endswith("."):
        problems.append("subject ends with a period")
    if body and not message.strip("\n").split("\n")[1] == "":
        problems.append("no blank line after the subject")
    return problems


def add_trailer(message, key, value):
    """``message`` with the trailer ``key: value`` added unless already there."""
    line = f"{key}: {value}"
    text = message.rstrip("\n")
    if line in text.splitlines():
        return text + "\n"
    subject, body = split_message(text)
    paragraphs = re.split(r"\n\s*\n", body) if body else []
    if paragraphs and is_trailer_block(paragraphs[-1]):
        paragraphs[-1] += "\n" + line
    else:
        paragraphs.append(line)
    return subject + "\n\n" + "\n\n".join(paragraphs) + "\n"
