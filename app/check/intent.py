"""What an instruction asks of a file, read once without a model: the facts the plan and checks use.

Reading the instruction shapes a check or which prompt is asked, never the file. Contract:
``read_intent(instruction, source) -> Intent``, each field a plain reading of the words and the
file's definitions (``app.code.source.Source``): ``rename`` ("rename [the function …] OLD to
NEW"); ``named`` (the definitions it names, in order; a lowercase word only where it reads as a
name; a rename's names name none); ``place`` (those its opening names as where: "In X, …",
"X: …"); ``each`` (the sites it joins with "and": the change goes to every site); ``values``
("from A to B", "change A to B", "replace A with B"); ``spelled`` (the names it writes as code);
``everywhere``, ``across``, ``removal``, ``only_adds``, ``comments``, ``mentions``, ``layout``:
the words that ask for a change across the file, for type hints or docstrings, for a removal,
only for an addition, name comments; whether any word is a definition's name; whether it
speaks of layout (``Intent``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..code.names import whole_word
from ..code.source import Source
from ..code.syntax import Definition

_RENAME = re.compile(
    r"\brename\s+(?:the\s+)?(?:((?:local\s+)?(?:variable|function|method|class|parameter|"
    r"argument|attribute|constant|field|name))\s+)?[`'\"]?([A-Za-z_]\w*)[`'\"]?\s+"
    r"(?:to|as|into)\s+[`'\"]?([A-Za-z_]\w*)",
    re.I,
)
_MEMBER = frozenset(("method", "attribute", "field"))
"""What a rename may say its name is when it is reached as ``x.name``."""
_NOT_A_DEFINITION = re.compile(r"variable|parameter|argument|attribute|field|constant", re.I)
_VALUE = re.compile(r"\bfrom\s+(\S+?)\s+to\s+(\S+?)(?=[\s,;]|\.(?:\s|$)|$)", re.I)
_MEASURE = re.compile(
    r"\bfrom\s+(-?\d[\d_.]*)\s+((?:[A-Za-z%]+\s*){1,3}?)\s*to\s+(-?\d[\d_.]*)\s+\2"
    r"(?=[\s,;]|\.(?:\s|$)|$)",
    re.I,
)
"""A number with its unit on both sides ("from 12 months to 18 months", "from 60 per
minute to 120 per minute"): the numbers change."""
EVERYWHERE = re.compile(
    r"\b(everywhere|throughout|every\s+\w+|(?:all|each)\s+(?:of\s+)?(?:the\s+|its\s+)?"
    r"(?:occurrences?|uses?|usages?|references?|calls?|places?|functions?|methods?|classes|"
    r"signatures?|definitions?|lines|names|parameters|arguments|variables|docstrings|"
    r"comments|imports|strings)|(?:whole|entire)\s+(?:file|module|text|code))\b",
    re.I,
)
"""Words that ask for a change across the file."""
_ACROSS = re.compile(r"\b(type\s+hints?|(?:type\s+)?annotations?|docstrings?)\b", re.I)
"""Words that ask for type hints or docstrings (of every definition, unless one is named)."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_ONLY_ADDS = re.compile(r"\s*(?:add|insert|append)\b", re.I)
_REWORDS = re.compile(
    r"\b(?:replac\w*|chang\w*|mov\w*|merg\w*|join\w*|combin\w*|rewrit\w*|instead|"
    r"rather than|turn\w* into|convert\w*)\b",
    re.I,
)
_COMMENTS = re.compile(r"\b(comments?|docstrings?|documentation|docs?)\b", re.I)
_REMOVAL = re.compile(
    r"\b(remov\w*|delet\w*|drop\w*|strip\w*|cut|trim\w*|eras\w*|eliminat\w*|get rid|"
    r"shorten\w*|condens\w*|dedup\w*|minif\w*|prun\w*|keep only|only keep|without|"
    r"clean(?:s|ed|ing)?[ -]?up)\b",
    re.I,
)
_LAYOUT = re.compile(
    r"\b(blank|empty)\s+lines?\b|\bwhite\s*space|\btrailing\s+spaces?\b|\bnew\s*lines?\b|"
    r"\bindent\w*|\bformat\w*|\blayout\b|\bline\s+breaks?\b|\bspacing\b",
    re.I,
)
"""Words that ask about layout: blank lines, white space, indentation, formatting."""
_DOTTED = re.compile(r"[A-Za-z_](?:[\w.]|::)*\w|[A-Za-z_]")
_AND = re.compile(
    r"(?:\(\))?[`'\"]?[\s,]*(?:and|&)\s+(?:(?:of|in|to|for)\s+)?(?:the\s+)?"
    r"(?:(?:function|method|class)\s+)?[`'\"]?",
    re.I,
)
"""What joins two names the change goes to both of: "f and g", "`f()` and `g()`"."""


@dataclass(frozen=True)
class Intent:
    instruction: str
    rename: tuple[str, str] | None = None
    rename_variable: bool = False
    """The rename says its name is a variable, parameter, attribute or field."""
    rename_member: bool = False
    """The rename says its name is a method, attribute or field (reached through objects)."""
    named: tuple[Definition, ...] = ()
    """The file's definitions the instruction names, by their qualified name (``Repr.repr_dict``)
    or their last part (``do_shorts``, ``do_shorts()``), in the order named; a name that is several
    definitions' last part names all of them; a lowercase word names one only when it reads as a
    name ("in getopt", "getopt()", "the function digest", in backticks), not "add" in "and add a
    docstring"; the names of a rename name none (they say what changes, not where)."""
    each: tuple[tuple[Definition, ...], ...] = ()
    """Per site the change goes to, the definitions its word names (one of them changes)."""
    values: tuple[tuple[str, str], ...] = ()
    """``(a, b)`` pairs of "from A to B" (quotes kept as written; "from 12 months to 18 months", a
    number with the same unit on both sides, is (12, 18)), and of "change A to B" / "replace A
    with B" where the file holds A verbatim (A and B: the last quoted part of each side, if any)."""
    everywhere: str = ""
    """The words that ask for a change across the file (``EVERYWHERE``; "" when none)."""
    comments: bool = False
    across: str = ""
    """The words that ask for type hints or docstrings ("" when none)."""
    removal: bool = False
    """It asks for something to be removed or shortened (``asks_removal``)."""
    only_adds: bool = False
    """It only adds ("Add the item …"): nothing it says replaces or rewords."""
    mentions: bool = False
    """A word of it, the renamed name aside, is the last part of a definition's name (a
    looser reading than ``named``: any word, any case)."""
    layout: bool = False
    """It speaks of layout (``_LAYOUT``: blank lines, white space, indentation, format)."""
    place: tuple[Definition, ...] = ()
    """The definitions its opening names as where the change goes: "In X, …", "In the method
    X, …", "X: …" (``_PLACE``); () when it opens otherwise."""
    spelled: tuple[str, ...] = ()
    """Names it writes as code (``spelled_names``), in order, each once."""

    def says(self, word: str) -> bool:
        """The instruction has ``word`` as a whole word (``app.code.names.whole_word``)."""
        return whole_word(word).search(self.instruction) is not None


_PLACE = re.compile(
    r"\s*(?:in\s+(?:the\s+)?(?:(?:function|method|class)\s+)?(`?)([A-Za-z_](?:[\w.]|::)*)\1"
    r"(?:\(\))?\s*,|(`?)([A-Za-z_](?:[\w.]|::)*)\3(?:\(\))?\s*:\s)",
    re.I,
)
"""An opening that says where: "In `PageCache.fetch`, …", "write_many: …"."""
_TICKED = re.compile(r"`([^`\n]+)`")
_CALL_OR_NAME = re.compile(r"[A-Za-z_](?:[\w.]|::)*(?:\(.*\))?")
_CODE_SHAPED = re.compile(
    r"(?<![\w.`/-])(?:([A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+)|(\w*_\w*[A-Za-z]\w*|[a-z]+[A-Z]\w*)"
    r"|([A-Za-z_]\w*)(?=[(=]))(?![\w`])"
)
"""Words shaped as code outside backticks: dotted (``Money.__repr__``), with an underscore
(``write_many``), camelCase (``minReplicas``), or called or assigned (``urlopen(``,
``timeout=10``)."""
_CODE_PART = re.compile(r"_|[a-z][A-Z]")


def spelled_names(instruction: str) -> list[str]:
    """The names ``instruction`` writes as code, each once, in order: a backticked name or call
    (its callee's parts: `` `this.off(event, wrapper)` `` gives ``this``, ``off``), and words
    shaped as code (``_CODE_SHAPED``; of a dotted word outside backticks only the parts with an
    underscore or camelCase, so ``backup.sh`` and ``pyproject.toml`` name nothing)."""
    found: list[str] = []
    for m in _TICKED.finditer(instruction):
        if _CALL_OR_NAME.fullmatch(m.group(1).strip()):
            callee = m.group(1).strip().split("(")[0]
            found += re.split(r"\.|::", callee)
    for m in _CODE_SHAPED.finditer(_TICKED.sub(" ", instruction)):
        if m.group(1):
            found += [p for p in re.split(r"\.|::", m.group(1)) if _CODE_PART.search(p)]
        else:
            found.append(m.group(2) or m.group(3))
    out: list[str] = []
    for name in found:
        if len(name) >= 2 and name.strip("_") and name not in out:
            out.append(name)
    return out


def asks_removal(instruction: str) -> bool:
    """True when the instruction asks for something to be removed or shortened."""
    return _REMOVAL.search(instruction) is not None


def _strip(value: str) -> str:
    return value.strip().rstrip(".,;:")


_CHANGE = re.compile(
    r"\b(?:change|replace)\s+(.+?)\s+(?:to|with|by)\s+(.+?)(?=\s*(?:;|:\s|,\s|\s+and\s|\.(?:\s|$)|$))",
    re.I,
)
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|'([^']+)'")


def _literal(phrase: str) -> str:
    """The last quoted part of ``phrase``, else all of it, stripped."""
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(phrase)]
    return quoted[-1] if quoted else _strip(phrase)


def _changes(instruction: str, text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """ "change A to B" / "replace A with B" where ``text`` holds A: (A, B, span)."""
    found = []
    for m in _CHANGE.finditer(instruction):
        if re.search(r"\bfrom\b", m.group(1), re.I):
            continue  # "change X from a to b": ``_VALUE`` reads it
        a, b = _literal(m.group(1)), _literal(m.group(2))
        if len(a) >= 2 and b and a != b and a in text:
            found.append((a, b, m.span()))
    return found


_KIND = re.compile(r"\b(function|method|class)\s+$", re.I)
_LEAD = re.compile(r"\b(function|method|class|def|in|of)\s+$", re.I)


def _defs_named(name: str, defs: list[Definition]) -> list[Definition]:
    """The definitions ``name`` names: by qualified name or its last parts."""
    return [d for d in defs if d.name == name or d.name.endswith("." + name)]


def _named(instruction: str, defs: list[Definition]) -> list[tuple[int, int, list[Definition]]]:
    """``(start, end, definitions)`` of each word of ``instruction`` that names definitions;
    "the function digest" names a top-level one where a method has that name too."""
    found = []
    for m in _DOTTED.finditer(instruction):
        word = m.group(0).rstrip(".")
        name = word.replace("::", ".")  # Rust's Config::port is the definition Config.port
        before, after = instruction[: m.start()], instruction[m.start() + len(word) :]
        if (
            word.isalpha()
            and word.islower()
            and not (
                _LEAD.search(before) or after.startswith("(") or before.endswith(("`", "'", '"'))
            )
        ):
            continue  # "add", "get", "run": an English word unless something says a name
        hits = _defs_named(name, defs)
        kind = _KIND.search(before)
        if kind and len(hits) > 1:
            top = kind.group(1).lower() != "method"
            hits = [d for d in hits if (d.depth == 0) == top] or hits
        if hits:
            found.append((m.start(), m.start() + len(word), hits))
    return found


def read_intent(instruction: str, source: Source) -> Intent:
    """The ``Intent`` of ``instruction`` on the file ``source`` (module docstring)."""
    text, defs = source.text, list(source.definitions)
    rename, variable = None, False
    r = _RENAME.search(instruction)
    if r and r.group(2) != r.group(3):
        rename = (r.group(2), r.group(3))
    spans = _named(instruction, defs)
    if rename is not None:  # the renamed name is what changes, not where
        variable = bool(r.group(1) and _NOT_A_DEFINITION.search(r.group(1)))
        spans = [s for s in spans if instruction[s[0] : s[1]] not in rename]
    named: list[Definition] = []
    for _, _, hits in spans:
        named += [d for d in hits if d not in named]
    each: list[tuple[Definition, ...]] = []
    for (_, e1, h1), (s2, _, h2) in zip(spans, spans[1:], strict=False):
        if _AND.fullmatch(instruction[e1:s2]):
            each += [tuple(h) for h in (h1, h2) if tuple(h) not in each]
    pairs = [
        (_strip(m.group(1)), _strip(m.group(2)), m.span())
        for m in _VALUE.finditer(instruction)
        if _strip(m.group(1)) and _strip(m.group(2)) and _strip(m.group(1)) != _strip(m.group(2))
    ]
    pairs += [
        (m.group(1).rstrip("."), m.group(3).rstrip("."), m.span())
        for m in _MEASURE.finditer(instruction)
        if m.group(1) != m.group(3)
    ]
    pairs += [c for c in _changes(instruction, text) if c[:2] not in [p[:2] for p in pairs]]
    values = tuple((a, b) for a, b, _ in pairs)
    everywhere, across = EVERYWHERE.search(instruction), _ACROSS.search(instruction)
    last_parts = {d.name.rsplit(".", 1)[-1] for d in defs}
    words = set(_WORD.findall(instruction)) - {rename[0] if rename else ""}
    opening = _PLACE.match(instruction)
    place: list[Definition] = []
    if opening is not None and rename is None:
        place = _defs_named((opening.group(2) or opening.group(4)).replace("::", "."), defs)
    return Intent(
        instruction,
        rename,
        variable,
        bool(rename) and (r.group(1) or "").lower() in _MEMBER,
        tuple(named),
        tuple(each),
        values,
        everywhere.group(0) if everywhere else "",
        _COMMENTS.search(instruction) is not None,
        across.group(0) if across else "",
        asks_removal(instruction),
        bool(_ONLY_ADDS.match(instruction)) and not _REWORDS.search(instruction),
        bool(words & last_parts),
        _LAYOUT.search(instruction) is not None,
        tuple(place),
        tuple(spelled_names(instruction)),
    )
