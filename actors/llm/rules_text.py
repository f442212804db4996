"""Text handling shared by the rules client: cleaning, segmentation, vocabulary.

Statement filters drop questions, hypotheticals, open plans and assistant hedges.
Cleaning removes what must never become a memory (injected ``<dynmem-memory>`` blocks,
code fences, stack traces, tool output, talk about the memory tools); segmentation cuts
the rest into sentences without breaking ``e.g.``, ``3.12``, ``app.py`` or URLs, then
into clauses. The technology table maps a name to its display form and to the belief
key it answers (``pnpm`` -> ``package manager``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.keys import normalize_text

_MEMORY_BLOCK = re.compile(r"<dynmem-memory\b.*?(?:</dynmem-memory>|\Z)", re.S | re.I)
_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
MEMORY_TALK = re.compile(
    r"memory_(?:search|why|forget|remember)|log_(?:search|timeline|window)|dynmem", re.I
)
_NOISE_LINE = re.compile(
    r"""^\s*(?:
        traceback\b | file\ ".*",\ line | at\ [\w.$<>]+\ ?\( | [\w.]*(?:error|exception):\s
      | npm\ err! | error\[ | warning: | \$\ | >>>\ | >\ ? | \+\+\+ | --- | @@ | \|
      | \[?\d{4}-\d\d-\d\d[t\ ]\d | (?:debug|info|warn|warning|error|fatal)\b[:\]]
      | \[(?:debug|info|warn|error)\]
    )""",
    re.I | re.X,
)
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|resp|esp|a\.k\.a)\.", re.I)
_BACKTICK = re.compile(r"`[^`\n]+`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|\s+(?:--|—|–|·)\s+"
    r"|,\s+and\s+|,?\s+(?:and|but)\s+(?=(?:also\s+|then\s+|now\s+)?(?:the|we|we're|we've|our|i|i've|i'm|"
    r"from now on|let's|use|it's|they|you)\b)"
    r"|,\s+(?=(?:but\s+)?(?:now|we|we're|our|the)\s+\w+(?:\s+\w+)?\s+(?:is|are|now|lives?|runs?|listens?|uses?|use)\b)",
    re.I,
)
# A comma splice: a new subject of one or two words (three after "the" or "our") and its copula after a comma
# ("the old theme looked dated, landing pages are now on v3", "three was too few, the retry cap will be 5").
# Not a relative clause ("the api, which is old, ..."), not after a subordinate clause ("if it fails,
# the job is retried": the condition governs the rest) and not after a fronted phrase of two words or
# fewer or one that opens with a preposition ("for the cache, port is 6380", "in staging, the relay is
# on 7312": the phrase scopes what follows). A one-word subject that owns a thing is a new clause too
# ("ana owns the exports, li owns the docs"). The value may be code (hidden as a placeholder while splitting).
_SPLICE = re.compile(r",\s+(?=(?!(?:which|who|whom|whose|that|where|when|it|this)\b)"
                     r"(?:(?:(?:the|our)\s+[\w-]+(?:\s+[\w-]+){0,2}|[\w-]+(?:\s+[\w-]+)?)\s+(?:is|are|will\s+be)\s+[\w\x00]"
                     r"|[\w-]+\s+(?:now\s+)?(?:owns|maintains|takes\s+over|took\s+over)\s+\w))", re.I)
_SUBORDINATE = re.compile(r"^(?:if|when|whenever|unless|once|because|since|although|though|while|whether|as long as)\b", re.I)
_FRONTED = re.compile(r"^(?:for|in|on|at|from|with|without|unlike|like|per|after|before|during|under|inside|outside)\b", re.I)


# A subordinate clause that the sentence takes as given ("now that the worker sits on Render, deploys
# fail", "because the queue now runs on NATS, the consumers need a restart"): the speaker asserts it as much as
# the main clause, so it is read as a clause of its own. Conditions ("if", "when", "unless") are not:
# they assert nothing.
_PRESUPPOSED = re.compile(r"^(?:now\s+that|since|because|given\s+that|seeing\s+as)\s+(?P<given>[^,]+?),\s+(?P<main>\S.*)$",
                          re.I)


def _presupposed(part: str) -> list[str]:
    """``part`` split into the clause it takes as given and its main clause, when it opens with one."""
    m = _PRESUPPOSED.match(part.strip())
    if m is None or len(m.group("given").split()) < 3:
        return [part]
    return [m.group("given"), m.group("main")]


# An item of an inline numbered list ("three things: 1) ... 2) ..."), and a head that makes every item of its list
# something not done: a plan, options, an attempt ("todo: 1) ...", "we tried 1) ... 2) ..., neither fixed it").
_INLINE_ITEM = re.compile(r"\s+\d{1,2}[).]\s+(?=[a-z])")
_NOT_DONE_HEAD = re.compile(r"\b(?:todo|to-do|to do|plans?|planned|options?|proposals?|ideas?|next|tried|try|trying|maybe|"
                            r"should|could|would|might|if|roadmap|wishlist|later|tomorrow|suggest\w*|either|or)\b", re.I)


def _inline_items(sentence: str) -> list[str]:
    """``sentence`` split at the items of an inline numbered list; only its head when what opens or closes the list
    says they are not done."""
    parts = _INLINE_ITEM.split(sentence)
    if len(parts) < 2:
        return [sentence]
    if _NOT_DONE_HEAD.search(parts[0]) or _NOT_DONE_HEAD.search(parts[-1].split(",")[-1]):
        return [parts[0]]  # the items of a plan, of options or of an attempt state nothing
    return parts


def _spliced(part: str) -> list[str]:
    """``part`` split at its comma splices, keeping a fronted phrase with the clause it scopes."""
    if _SUBORDINATE.match(part.strip()):
        return [part]
    out: list[str] = []
    for piece in _SPLICE.split(part):
        # a piece with a colon is a lead-in and its own clause ("in the call we agreed: A, B"), not a fronted phrase
        if out and (len(out[-1].split()) <= 2 or (_FRONTED.match(out[-1].strip()) and ":" not in out[-1])):
            out[-1] = f"{out[-1]}, {piece}"
        else:
            out.append(piece)
    return out


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
# A short line that states a change with an arrow and names what changed ("the API: 8081 -> 9090", "db port
# 5432 → 6432"): few letters, yet no paste of numbers.
_SHORT_CHANGE = re.compile(r"^\s*[A-Za-z][\w ./-]{1,40}?:?\s+\S{1,40}\s+(?:->|→|=>)\s+\S{1,40}\s*$"
                           r"|^\s*[A-Za-z][\w.+#-]{1,20}:?\s+v?\d+(?:\.\d+)+\s*$")  # or a name and its version: "Node: 20.11"
# Markdown bold in prose ("pinned to **Zig 0.13**"): emphasis, not part of what is said. Measured (session 16):
# stripping it in bulleted lines too read an assistant's setup summaries as labelled facts, a second copy
# of each fact that moved BM25's statistics enough to drop an owner memory of the demo under the gate.
_BOLD = re.compile(r"\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*")


def strip_memory_blocks(text: str) -> str:
    """Remove injected memory blocks, including an unterminated trailing one."""
    return _MEMORY_BLOCK.sub(" ", text)


# A line of an environment file: ``NAME=value`` and nothing else.
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Z][A-Z0-9_]*=\S*\s*$")


def _pasted_env_lines(lines: list[str]) -> set[int]:
    """Indexes of lines in runs of two or more ``NAME=value`` lines: a pasted environment file, like
    a code block, shows values of wherever it came from, not statements."""
    out: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*lines, ""]):
        if _ENV_LINE.match(line):
            run.append(i)
            continue
        if len(run) >= 2:
            out.update(run)
        run = []
    return out


# A fenced block the assistant wrote as a document (a README section, an ops page, a checklist):
# no language named, or a prose one. Its prose lines state what the assistant wrote down.
_DOC_FENCE = re.compile(r"(```|~~~)[ \t]*(?P<info>[\w+-]*)[^\n]*\n(?P<body>.*?)(?:\n[ \t]*\1|\Z)", re.S)
_PROSE_INFO = frozenset({"", "markdown", "md", "text", "txt", "plain"})
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+|[-*•]\s+|\d+[.)]\s+)")
# What code, configuration and commands have and a written line has not: a call, braces, an
# assignment, a shell prompt or pipe, a flag, a comment after code, a statement end.
_CODE_MARKS = re.compile(r"\w\(|[{}<>|\\$]|=|;\s*$|\s--?\w|\s{2,}#|^\s*(?:\./|#!|//)")


def _prose_line(line: str) -> bool:
    """Whether a line of a fenced block reads as written prose: words, not code. Inline code in
    backticks is a word of the prose ("branch off `main`, name it `feat/X-<n>`"), whatever it holds,
    when three words or more stand outside it ("export `X=1`" is a command)."""
    body = _HEADING.sub("", line).strip()
    if len(_BACKTICK.sub(" ", body).split()) >= 3:  # words around the code ("branch off `x`, name it `y`")
        body = _BACKTICK.sub("`x`", body)
    if len(body.split()) < 2 or not (body[0].isalpha() or body[0] == "`") or _CODE_MARKS.search(body):
        return False
    return sum(ch.isalpha() or ch == " " for ch in body) >= 0.7 * len(body)


# A two-column markdown table ("| Setting | Value |", "|---|---|", "| Sample interval | 20 minutes |"): a
# header row, a rule line under it, then rows of a label and its value. Only such a table is read: rows
# without a header and rule (tool output, a log) and tables of more columns are not.
_TABLE_ROW = re.compile(r"^\|\s*(?P<label>[^|]+?)\s*\|\s*(?P<value>[^|]+?)\s*\|\s*$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-+:?\s*\|\s*:?-+:?\s*\|?\s*$")


def _table_rows_marked(lines: list[str]) -> list[tuple[str, bool]]:
    """Each line; the rows of a two-column table under its header and rule as "label: value" (marked
    True), the header and rule dropped. An indented line is left as it is (indented code)."""
    out: list[tuple[str, bool]] = []
    in_table = False
    for i, line in enumerate(lines):
        if _TABLE_ROW.match(line) and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            in_table = True  # the header: it names the columns
            continue
        if in_table and _TABLE_RULE.match(line):
            continue
        row = _TABLE_ROW.match(line) if in_table else None
        in_table = row is not None
        out.append((f"{row.group('label')}: {row.group('value')}", True) if row else (line, False))
    return out


def _table_rows_as_items(lines: list[str]) -> list[str]:
    """A two-column table's rows as "label: value" lines; its header and rule lines dropped."""
    return [line for line, _ in _table_rows_marked(lines)]


# What a terminal shows and a document does not: a shell prompt opening the block ("$ rg -n heroku"), or a
# line of a search tool or compiler that starts with the file where it found something ("src/app.ts:12:").
_TERMINAL = re.compile(r"\A\s*(?:\$|❯|%)[ \t]+\S|^[ \t]*[\w-]*[./][\w./-]*:\d+:", re.M)


def _document_lines(match: re.Match[str]) -> str:
    """The prose lines of a fenced block that is a document (most of its lines prose), else nothing."""
    if match.group("info").lower() not in _PROSE_INFO or _TERMINAL.search(match.group("body")):
        return "\n"
    lines = _table_rows_as_items([ln for ln in match.group("body").splitlines() if ln.strip()])
    prose = [ln for ln in lines if _prose_line(ln)]
    if len(prose) < 2 or len(prose) < 0.5 * len(lines):
        return "\n"
    return "\n" + "\n".join("- " + _HEADING.sub("", ln).strip() for ln in prose) + "\n"  # items of a document


# A short shell block that a line ending in a colon introduces ("Releases are cut with:" then a fenced
# `make release`): the command that line is about, said inline. One to three command lines, each
# a program name and its arguments (a prompt "$ " dropped); anything else stays a block.
_SHORT_FENCE = re.compile(r"^[ \t]*(?P<f>```|~~~)[ \t]*(?:bash|sh|shell|console|zsh)?[ \t]*\n"
                          r"(?P<body>(?:[^\n]*\n){1,3}?)[ \t]*(?P=f)[ \t]*$", re.M)
_COMMAND_LINE = re.compile(r"(?:\$\s+)?(?P<cmd>[a-z][\w.-]*(?:\s+[^\s=#`][^\n#`]*)?|\./[^\n#`]+)")


def inline_commands(text: str) -> str:
    """``text`` with each short command block said inline after the line that introduces it."""
    out: list[str] = []
    done = 0
    pos = 0
    while (fence := _SHORT_FENCE.search(text, pos)) is not None:
        pos = fence.end() if not _opens_inside_block(text, done, fence.start()) else fence.start() + 3
        if pos == fence.start() + 3:
            continue  # the closing fence of a longer block, not the opening of a short one
        before = text[done:fence.start()].rstrip()
        intro_at = before.rfind("\n") + 1
        intro = before[intro_at:]
        lines = [ln.strip() for ln in fence.group("body").splitlines() if ln.strip()]
        commands = [m.group("cmd").strip() for ln in lines if (m := _COMMAND_LINE.fullmatch(ln))]
        if not intro.endswith(":") or not re.search(r"[A-Za-z]", intro) or not lines \
                or len(commands) != len(lines):
            continue
        out.append(before[:intro_at] + intro + " " + " or ".join(f"`{c}`" for c in commands) + ".")
        done = fence.end()
    return "".join(out) + text[done:]


_FENCE_MARK = re.compile(r"^[ \t]*(?:```|~~~)", re.M)


def _opens_inside_block(text: str, start: int, at: int) -> bool:
    """Whether the fence at ``at`` sits inside a block opened between ``start`` and it (an odd number of
    fence lines before it): it is then that block's closing fence, not the opening of a short block."""
    return len(_FENCE_MARK.findall(text, start, at)) % 2 == 1


def clean(text: str, documents: bool = False) -> str:
    """Drop memory blocks, code fences and lines that look like code, traces, tool output or a pasted
    environment file. ``documents``: keep the prose lines of a fenced block written as a document
    (the assistant's own writing; a user's paste shows wherever it came from)."""
    return "\n".join(line for line, _ in _clean_lines(text, documents))


def listed_lines(text: str, documents: bool = False) -> tuple[str, ...]:
    """The cleaned lines of ``text`` that are items of a bulleted list or lines of a written document."""
    return tuple(line for line, listed in _clean_lines(text, documents) if listed)


class Documents(NamedTuple):
    """The prose lines of the fenced documents of a message (as ``clean`` leaves them), and their headings."""

    lines: tuple[str, ...] = ()
    headings: frozenset[str] = frozenset()

    def holds(self, sentence: str) -> bool:
        """Whether ``sentence`` is (part of) a document's line, and not a heading."""
        return sentence not in self.headings and any(sentence in line for line in self.lines)


def document_lines(text: str) -> Documents:
    """The prose lines of the fenced documents in ``text`` and their headings (``Documents``)."""
    lines: list[str] = []
    headings: set[str] = set()
    for match in _DOC_FENCE.finditer(inline_commands(strip_memory_blocks(text))):
        headed = {_HEADING.sub("", ln).strip() for ln in match.group("body").splitlines() if ln.lstrip().startswith("#")}
        headings |= {_BOLD.sub(r"\1", h).strip(" .:") for h in headed} | headed
        lines += [ln for ln, _ in _clean_lines(_document_lines(match), False) if ln not in headed]
    return Documents(tuple(lines), frozenset(headings))


def _clean_lines(text: str, documents: bool) -> list[tuple[str, bool]]:
    """``clean``'s lines, each with whether it was a list item (or a document's line)."""
    text = strip_memory_blocks(text)
    text = _FENCE.sub("\n", _DOC_FENCE.sub(_document_lines, inline_commands(text)) if documents else text)
    kept: list[tuple[str, bool]] = []
    lines = text.splitlines()
    rows: set[int] = set()
    if documents:  # a table the assistant writes in its reply reads as it does in a fenced document
        marked = _table_rows_marked(lines)
        rows = {i for i, (_, table) in enumerate(marked) if table}
        lines = [f"- {ln}" if table else ln for ln, table in marked]
    pasted = _pasted_env_lines(lines)
    for i, line in enumerate(lines):
        if i in pasted:
            continue
        if not _BULLET.match(line):  # a bullet's bold is a summary's heading ("- **Billing**: ..."), left as is:
            line = _BOLD.sub(r"\1", line)  # read as labelled facts, they restate the memories a second time
        if not line.strip() or _NOISE_LINE.match(line):
            continue
        if line.startswith(("    ", "\t")):  # indented code
            continue
        letters = sum(ch.isalpha() for ch in line)
        if letters < 0.45 * len(line.strip()) and i not in rows and not _SHORT_CHANGE.match(line):
            continue  # few letters: a paste of numbers; a table's row keeps its label ("Tile size: 512 × 512")
        kept.append((_BULLET.sub("", line).strip(), bool(_BULLET.match(line))))
    return kept


def sentences(text: str, documents: bool = False) -> list[str]:
    """Split cleaned text into sentences, keeping abbreviations, versions and paths whole (``documents``:
    see ``clean``)."""
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    protected = _BACKTICK.sub(hide, clean(text, documents))
    protected = _ABBREVIATIONS.sub(lambda m: m.group(1).replace(".", "\x01") + "\x01", protected)
    out: list[str] = []
    for part in _SENTENCE_END.split(protected):
        part = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)
        part = part.replace("\x01", ".").strip()
        if part:
            out.append(part)
    return out


# A request that closes a sentence after a statement: "we moved to X at URL — can you update
# the config?". Clause structure, not vocabulary: a separator, then a modal addressed to "you".
_TRAILING_REQUEST = re.compile(
    r"\s*(?:—|–|\s-|,|;|:)\s+(?=(?:(?:so|and|then|also|now)\s+)?(?:can|could|would|will)\s+you\b)", re.I)


def split_trailing_requests(sentences_: list[str]) -> list[str]:
    """Each sentence with a closing request split off, so that the statement before it is judged alone.

    "the lab moved to MLflow at http://ml:5000 — can you swap the logging over?" gives
    ["the lab moved to MLflow at http://ml:5000.", "can you swap the logging over?"]: the
    statement holds, the request is a question and states nothing. A request with no
    statement before it (fewer than three words) stays as it was.
    """
    out: list[str] = []
    for sentence in sentences_:
        match = _TRAILING_REQUEST.search(sentence)
        head = sentence[: match.start()].strip() if match else ""
        if match is None or len(head.split()) < 3 or "`" in sentence[match.start():match.end()]:
            out.append(sentence)
            continue
        out.append(head.rstrip(".!") + ".")
        out.append(sentence[match.end():].strip())
    return out


# A clause that reports a proposal, not what holds: "Dana floated moving sessions to Memcached",
# "someone suggested X". English verbs of proposing (a closed class, like the verbs of ending);
# whether it was accepted is said by a later statement, which is read on its own.
# The assistant asks before it acts ("should I ...?", "do you want ...?"): what it shows is not done yet.
# An alternation for larger patterns (``rules_extract._DECLINED``, ``rules_diffs.ASKS``).
ASKS_FIRST = r"should i|do you want|want me to"
PROPOSAL = re.compile(
    r"\b(?:floated|(?:floats|floating)(?!-|\s*[,.;:!?)]|\s*$|\s+(?:or|and|point|points|in|for|to|as|vs)\b)|"  # not the number type
    r"suggested|suggests|suggesting|proposed|proposes|proposing|pitched|pitches|"
    r"pitching|brought up|brings up|raised the idea|toyed with|toying with|wants us to|wanted us to)\b", re.I)


def clauses(sentence: str) -> list[str]:
    """Split a sentence on ``;`` and on ``, and``/``but`` before a new subject."""
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    protected = _BACKTICK.sub(hide, sentence)
    parts = [q for i in _inline_items(protected) for p in _CLAUSE_SPLIT.split(i) for r in _presupposed(p) for q in _spliced(r)]
    for n in range(len(parts) - 2, -1, -1):  # "for prod, the api listens on X": a fronted phrase scopes its clause
        if len(parts[n].split()) <= 3 and _FRONTED.match(parts[n].strip()) and not parts[n].rstrip().endswith(":"):
            parts[n: n + 2] = [f"{parts[n]}, {parts[n + 1]}"]
    out = [re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], p).strip() for p in parts]
    return [p for p in out if p]


# name -> (display, category, aliases). Categories are the canonical belief keys.
_TECH_TABLE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "npm": ("npm", "package manager", ()),
    "pnpm": ("pnpm", "package manager", ()),
    "yarn": ("Yarn", "package manager", ()),
    "bun": ("Bun", "package manager", ("bun.js",)),
    "pip": ("pip", "package manager", ()),
    "poetry": ("Poetry", "package manager", ()),
    "uv": ("uv", "package manager", ()),
    "pipenv": ("Pipenv", "package manager", ()),
    "conda": ("conda", "package manager", ("mamba",)),
    "postgres": ("Postgres", "database", ("postgresql", "psql")),
    "mysql": ("MySQL", "database", ()),
    "mariadb": ("MariaDB", "database", ()),
    "sqlite": ("SQLite", "database", ("sqlite3",)),
    "mongodb": ("MongoDB", "database", ("mongo",)),
    "dynamodb": ("DynamoDB", "database", ("dynamo",)),
    "cassandra": ("Cassandra", "database", ()),
    "cockroachdb": ("CockroachDB", "database", ()),
    "supabase": ("Supabase", "database", ()),
    "firestore": ("Firestore", "database", ()),
    "redis": ("Redis", "cache", ()),
    "memcached": ("Memcached", "cache", ()),
    "valkey": ("Valkey", "cache", ()),
    "kafka": ("Kafka", "message queue", ()),
    "rabbitmq": ("RabbitMQ", "message queue", ()),
    "sqs": ("SQS", "message queue", ()),
    "nats": ("NATS", "message queue", ()),
    "pytest": ("pytest", "test framework", ()),
    "jest": ("Jest", "test framework", ()),
    "vitest": ("Vitest", "test framework", ()),
    "mocha": ("Mocha", "test framework", ()),
    "unittest": ("unittest", "test framework", ()),
    "cypress": ("Cypress", "test framework", ()),
    "playwright": ("Playwright", "test framework", ()),
    "ruff": ("ruff", "linter", ()),
    "eslint": ("ESLint", "linter", ()),
    "flake8": ("flake8", "linter", ()),
    "pylint": ("pylint", "linter", ()),
    "biome": ("Biome", "linter", ()),
    "golangci-lint": ("golangci-lint", "linter", ()),
    "rubocop": ("RuboCop", "linter", ()),
    "black": ("black", "formatter", ()),
    "prettier": ("Prettier", "formatter", ()),
    "gofmt": ("gofmt", "formatter", ()),
    "rustfmt": ("rustfmt", "formatter", ()),
    "yapf": ("yapf", "formatter", ()),
    "mypy": ("mypy", "type checker", ()),
    "pyright": ("pyright", "type checker", ()),
    "github actions": ("GitHub Actions", "ci provider", ("gh actions",)),
    "gitlab ci": ("GitLab CI", "ci provider", ()),
    "circleci": ("CircleCI", "ci provider", ()),
    "jenkins": ("Jenkins", "ci provider", ()),
    "travis ci": ("Travis CI", "ci provider", ("travis",)),
    "buildkite": ("Buildkite", "ci provider", ()),
    "vercel": ("Vercel", "deploy target", ()),
    "netlify": ("Netlify", "deploy target", ()),
    "heroku": ("Heroku", "deploy target", ()),
    "fly.io": ("Fly.io", "deploy target", ()),
    "aws": ("AWS", "deploy target", ()),
    "gcp": ("GCP", "deploy target", ("google cloud",)),
    "azure": ("Azure", "deploy target", ()),
    "cloudflare": ("Cloudflare", "deploy target", ("cloudflare workers",)),
    "kubernetes": ("Kubernetes", "deploy target", ("k8s",)),
    "ecs": ("ECS", "deploy target", ()),
    "cloud run": ("Cloud Run", "deploy target", ()),
    "react": ("React", "frontend framework", ()),
    "vue": ("Vue", "frontend framework", ("vue.js",)),
    "svelte": ("Svelte", "frontend framework", ("sveltekit",)),
    "angular": ("Angular", "frontend framework", ()),
    "next.js": ("Next.js", "frontend framework", ("nextjs",)),
    "nuxt": ("Nuxt", "frontend framework", ()),
    "astro": ("Astro", "frontend framework", ()),
    "django": ("Django", "backend framework", ()),
    "flask": ("Flask", "backend framework", ()),
    "fastapi": ("FastAPI", "backend framework", ()),
    "express": ("Express", "backend framework", ("express.js",)),
    "rails": ("Rails", "backend framework", ("ruby on rails",)),
    "nestjs": ("NestJS", "backend framework", ()),
    "spring boot": ("Spring Boot", "backend framework", ()),
    "laravel": ("Laravel", "backend framework", ()),
    "webpack": ("webpack", "bundler", ()),
    "vite": ("Vite", "bundler", ()),
    "esbuild": ("esbuild", "bundler", ()),
    "rollup": ("Rollup", "bundler", ()),
    "parcel": ("Parcel", "bundler", ()),
    "sqlalchemy": ("SQLAlchemy", "orm", ()),
    "prisma": ("Prisma", "orm", ()),
    "typeorm": ("TypeORM", "orm", ()),
    "drizzle": ("Drizzle", "orm", ()),
    "sequelize": ("Sequelize", "orm", ()),
    "docker": ("Docker", "container runtime", ()),
    "podman": ("Podman", "container runtime", ()),
    "axios": ("axios", "http client", ()),
    "httpx": ("httpx", "http client", ()),
    "redux": ("Redux", "state management", ()),
    "zustand": ("Zustand", "state management", ()),
    "mobx": ("MobX", "state management", ()),
    "tailwind": ("Tailwind", "css framework", ("tailwindcss",)),
    "bazel": ("Bazel", "build tool", ()),
    "gradle": ("Gradle", "build tool", ()),
    "maven": ("Maven", "build tool", ()),
    "cmake": ("CMake", "build tool", ()),
    "nx": ("Nx", "monorepo tool", ()),
    "turborepo": ("Turborepo", "monorepo tool", ()),
    "lerna": ("Lerna", "monorepo tool", ()),
    "s3": ("S3", "object storage", ()),
    "gcs": ("GCS", "object storage", ()),
    "minio": ("MinIO", "object storage", ()),
    "elasticsearch": ("Elasticsearch", "search engine", ()),
    "opensearch": ("OpenSearch", "search engine", ()),
    "meilisearch": ("Meilisearch", "search engine", ()),
    "algolia": ("Algolia", "search engine", ()),
    "auth0": ("Auth0", "auth provider", ()),
    "clerk": ("Clerk", "auth provider", ()),
    "keycloak": ("Keycloak", "auth provider", ()),
    "okta": ("Okta", "auth provider", ()),
    "cognito": ("Cognito", "auth provider", ()),
    "sentry": ("Sentry", "monitoring", ()),
    "datadog": ("Datadog", "monitoring", ()),
    "terraform": ("Terraform", "infrastructure tool", ()),
    "pulumi": ("Pulumi", "infrastructure tool", ()),
    "graphql": ("GraphQL", "api style", ()),
    "grpc": ("gRPC", "api style", ()),
}

_ALIAS_TO_NAME: dict[str, str] = {}
for _name, (_display, _category, _aliases) in _TECH_TABLE.items():
    for _alias in (_name, *_aliases):
        _ALIAS_TO_NAME[_alias] = _name
TECH_PATTERN = re.compile(
    r"(?<![\w.-])("
    + "|".join(re.escape(a) for a in sorted(_ALIAS_TO_NAME, key=len, reverse=True))
    + r")(?![\w-]|\.\w)",
    re.I,
)
TECH_NAMES = frozenset(_TECH_TABLE)
CATEGORIES = frozenset(c for _, c, _ in _TECH_TABLE.values())


def tech_name(alias: str) -> str:
    """Canonical technology name for an alias (``PostgreSQL`` -> ``postgres``)."""
    return _ALIAS_TO_NAME.get(normalize_text(alias), normalize_text(alias))


def tech_display(name: str) -> str:
    return _TECH_TABLE[name][0] if name in _TECH_TABLE else name


def tech_category(name: str) -> str:
    return _TECH_TABLE[name][1] if name in _TECH_TABLE else ""


STOPWORDS = frozenset(
    """a an the and or but if of to in on at for from by with without into onto over under
    is are was were be been being am do does did done doing has have had having it its it's
    this that these those there here we our ours us i me my you your yours they them their
    he she his her as so than then now just also too very not no yes can could should would
    will shall may might must let lets let's use uses used using all any some each every which
    what who whom whose when where why how about again more most less new old only same other
    such own up down out off per via vs etc project projects please ok okay""".split()
)
_TOKEN = re.compile(r"[\w][\w./:@+-]*[\w]|[\w]")


def tokens(text: str) -> list[str]:
    """Identifier-aware tokens: keeps ``app.py``, ``3.12``, ``localhost:5000``, ``snake_case``."""
    return _TOKEN.findall(normalize_text(text.replace("`", " ")))


def content_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in STOPWORDS]


def is_value_token(token: str) -> bool:
    """A token that carries a value: a number, version, path, URL, flag or a known technology."""
    return (
        any(ch.isdigit() for ch in token)
        or any(ch in token for ch in "./:@_")
        or token in TECH_NAMES
        or token in _ALIAS_TO_NAME
    )


# ---------------------------------------------------------------- statement filters

_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|btw|fyi|fwiw|tbh|by the way|actually|oh|alright|anyway|ugh|argh|meh|hmm+|lol|welp|oof|"
    r"sigh|wow|whoa|yikes|hey|hi|hiya|morning|gm|yeah|yep|yup)(?![\w-])[\s,:!.-]*"
    r"|(?:yes|yeah|yep|no|nope|right|great|cool|perfect|nice|thanks|thank you|well|update|"
    r"quick update|important|note|done|all done|good news|heads up|just so you know|"
    r"correction|sorry)\s*(?:[,:!.]+\s*|\s+-\s+|$))+",
    re.I,
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget|do not forget|be aware|"
    r"make a note|for the record)(?:\s+that)?(?![\w-])[\s,:]*",  # not "Remember-me cookie"
    re.I,
)
_FROM_NOW_ON = re.compile(
    r"[\s,]*\b(?:from now on|going forward|moving forward|henceforth|from here on(?: out)?|"
    r"starting (?:today|now)|as of (?:today|now))\b[\s,]*",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|how|why|where|who|whom|whose|should|could|would|can|do|does|did|is|are|"
    r"was|were|will|shall|have|has|any idea|any chance|wanna|want to)\b",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"^(?:if|what if|suppose|supposing|assuming|imagine|in case|unless|maybe|perhaps|"
    r"hypothetically|i wonder|not sure|i'm not sure|i am not sure|do you think|once|when we|"
    r"i think|i guess|i feel like)\b"
    r"|(?<!due )(?<!by )\b(?:next (?:week|month|sprint|quarter|year)|tomorrow|at some point|some ?day)\b"
    r"|\b(?:asks?|asked|asking|wonders?|wondered|wants to know|wanted to know)\s+(?:if|whether)\b"  # an indirect question
    r"|\b(?:i think|i guess|i believe|i suppose|would|could|might|maybe|perhaps|probably|possibly|considering|thinking (?:about|of)|"
    r"planning (?:to|on)|plan to|wondering|used to|hopefully|someday|eventually|not sure|"
    r"in theory|if we|if you(?!\s+(?:need|want|ever need)\b)|unless|whether)\b",
    re.I,
)
_FUTURE = re.compile(r"\b(?:will|won't|shall|going to|gonna|we'll|i'll|should|want to|wanna)\b", re.I)
_COMMITMENT = re.compile(r"\b(?:always|never|let's|lets|decided|must)\b", re.I)
_ASSISTANT_SKIP = re.compile(
    r"^(?:i will|i'll|i am going to|i'm going to|let me|let's|next|now i'll|i can|i could|"
    r"you can|you could|you might|you may|you should|should i|would you|do you|shall i|"
    r"want me|it seems|it looks|looks like|i believe|i suggest|i recommend|consider|"
    r"we could|we can|to do this|here's|here is|first|then|finally|this will|that will|"
    r"i've added a test|sure|of course|great question|suggest\w*|options?)\b"
    r"|^(?:\w+\s+){0,2}(?:fix(?:es)?|plan|proposal|idea)\b[^:]{0,20}:",
    re.I,
)
_ASSISTANT_ECHO = re.compile(
    r"\b(?:you asked|you want|you wanted|you mentioned|you said|as requested|as you requested|"
    r"error|failed|fails|failing|traceback)\b",
    re.I,
)
CHANGE = re.compile(
    r"\b(?:now|change|switch|move|rename|upgrade|bump|migrate|migrated|switched|changed|updated|moved|renamed|set|configured|replaced|migrated|removed|"
    r"dropped|bumped|upgraded|downgraded|pinned|converted)\b",
    re.I,
)
DECISION = re.compile(
    r"\b(?:decided|decide|let's|lets|go(?:ing)? with|went with|switch\w*|mov(?:e|ed|ing)|"
    r"migrat\w*|instead of|rather than|replac\w*|chose|choose|chosen|picked|settled on|agreed|"
    r"adopt\w*|in favou?r of|renam\w*|chang\w*|upgrad\w*|downgrad\w*|bump\w*|now)\b",
    re.I,
)


def strip_fillers(text: str) -> tuple[str, bool, bool]:
    """Remove leading fillers and change markers; return (text, changed, remember)."""
    remember = changed = False
    for _ in range(4):
        before = text
        text = _FILLER.sub("", text).strip()
        if _REMEMBER.match(text):
            remember = True
            text = _REMEMBER.sub("", text, count=1).strip()
        if text == before:
            break
    if _FROM_NOW_ON.search(text):
        changed = True
        text = _FROM_NOW_ON.sub(" ", text).strip(" ,")
    text = re.sub(r"^please\s+", "", text, flags=re.I).strip()
    text = _CHAT_TAG.sub("", text)
    return text.rstrip(" .!"), changed, remember


# A chat abbreviation said aside ("slots are 90 min btw, ...", "the cap is 5 lol"): no part of what is stated.
# A hedge ("iirc", "afaik", "imo") is kept: it says the statement is unsure. After a copula the word is the value
# ("the channel is fyi").
_CHAT_TAG = re.compile(r"(?<!\bis)(?<!\bare)(?<![=:])\s+(?:btw|lol|fyi|tbh|fwiw|lmao|haha)(?=\s*(?:[,.;:!?)]|$))", re.I)


# History told as history: "back in June, when the gateway still ran on 3000", "back when we
# were on npm", "originally we used X". Such sentences name old values and must not revive them.
HISTORICAL = re.compile(
    r"\bback (?:in|when|then)\b|\bused to\b|\bin the old days\b|\boriginally\b|\bat the time\b"
    r"|\bwhen (?:we|it|they|the [\w-]+(?: [\w-]+)?) (?:still|were|was|had)\b|\bbefore (?:we|the) "
    r"(?:switch|mov|migrat|chang)\w*|\b(?:in|during|since) the (?:old|previous|legacy) (?:setup|days|version)\b",
    re.I,
)
# A header that announces a list of proposals, not of completed changes ("Plan:", "Suggest:",
# "I'll add X with two jobs:", "Something like:"). Its bullet list is dropped with it.
_PLAN_HEADER = re.compile(
    r"(?:\b(?:plan|proposal|suggest\w*|options?|ideas?|next steps|something like|for example|e\.g\.)"
    r"|^(?:i will|i'll|i'd|i would|we could|we can|you could|should i|want me)\b.*)\s*:\s*$",
    re.I,
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def _header_states_nothing(line: str) -> bool:
    """Whether a line that introduces a list or a block (it ends with a colon) is no statement: a
    plan or options ("Plan:", "I'll add...:"), a proposal, a question or a hypothesis ("If we moved,
    it would look like:"). What it introduces is then no statement either."""
    head = line.strip()
    if not head.endswith(":"):
        return False
    body = head[:-1].strip()
    return bool(_PLAN_HEADER.search(head) or PROPOSAL.search(body)) or (bool(body) and not is_statement(body, False))


def drop_plan_lists(text: str) -> str:
    """Remove the bulleted lists and fenced blocks introduced by a header that states nothing
    (``_header_states_nothing``); blank lines between the header and its list belong to it."""
    out: list[str] = []
    in_plan = in_fence = False
    for line in text.splitlines():
        if in_plan:
            if in_fence:
                in_fence = not line.lstrip().startswith(("```", "~~~"))
                continue
            if line.lstrip().startswith(("```", "~~~")):
                in_fence = True
                continue
            if not line.strip() or _LIST_ITEM.match(line) or line.startswith(("  ", "\t")) or line.lstrip().startswith("|"):
                continue  # an item, an indented line or a table row of the plan
        in_plan = _header_states_nothing(line)
        out.append(line)
    return "\n".join(out)


# Inline code that is a snippet of code or configuration, not a command or a value:
# `testpaths = ["tests"]`, `cache: npm`, `"test": "vitest run"`, `def f() -> None:`.
_CODE_LIKE = re.compile(r"[=(){}\[\]\"<>]|->|^[\w.-]+:(?:\s|$)|:\s*;", re.I)
_ENV_ASSIGN = re.compile(r"^[A-Z][A-Z0-9_]+ ?= ?[^\s=]+$")  # "PORT=8080", "MAX_RETRIES = 3"
# "jumpGrace = 0.08", "cache.max_entries = 800": one identifier set to one number-like literal, read by extract_setting
_NUMBER_ASSIGN = re.compile(r"^[A-Za-z_][\w.]*[A-Za-z0-9_] ?= ?[\w.+-]*\d[\w.+-]*$")


def mask_code(text: str, keep: "re.Pattern[str]") -> str:
    """Replace code- and config-like inline spans by a placeholder; keep commands (``keep``)."""

    def repl(match: re.Match[str]) -> str:
        span = match.group(0)[1:-1].strip()
        if keep.match(span) or _ENV_ASSIGN.match(span) or _NUMBER_ASSIGN.match(span) or not _CODE_LIKE.search(span):
            return match.group(0)
        return "`code`"

    return _BACKTICK.sub(repl, text)


def is_statement(text: str, changed: bool) -> bool:
    """True for a declarative sentence: not a question, hypothetical, or open plan."""
    if text.rstrip().endswith("?") or _QUESTION_START.match(text):
        return False
    if _HYPOTHETICAL.search(text) or HISTORICAL.search(text):
        return False
    return not (_FUTURE.search(text) and not changed and not _COMMITMENT.search(text))


def assistant_ok(text: str) -> bool:
    return not (_ASSISTANT_SKIP.match(text) or _ASSISTANT_ECHO.search(text))


# Words that are no present-tense verb needing an -s after a singular subject (modals, past forms, function words).
_NO_S = frozenset(
    "can could will would should shall may might must did was had got went saw made took felt found thought "
    "bought came ran met left gave told said knew began wrote read ate drove won lost kept sent spent built "
    "heard held brought taught caught sold chose grew drew flew wore put set let hit cut quit became sang "
    "swam fell forgot hung led paid rode rose sat slept spoke stood stole threw understood woke used "
    "tried started finished and or but am is are".split()
)


def third_person(verb: str) -> str:
    """The verb's form after a singular subject ("listen" -> "listens", "go" -> "goes"; a past form unchanged)."""
    if verb in _NO_S or verb.endswith("ed"):
        return verb
    if verb == "have":
        return "has"
    if verb == "do":
        return "does"
    if verb == "go":
        return "goes"
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"
