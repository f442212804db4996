"""engine.redact (detectors skipped by prechecks) finds and redacts exactly what the reference does.

The reference is ``eval/perf/redact_reference.py``: the module as it was before the prechecks,
every detector run on every text. Checked on the example history, the redaction corpora and
random text rich in what the detectors look for; each precheck is also checked directly to
be a necessary condition of its detector, and the case folding the prechecks rely on is
checked against Python's ``re`` on every code point.
"""

from __future__ import annotations

import importlib.util
import json
import re
import string
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from engine import redact as new
from tests.engine.test_redact import BENIGN, SECRETS

ROOT = Path(__file__).resolve().parents[2]


def _load_reference() -> ModuleType:
    """eval/perf/redact_reference.py, loaded from its file: run alone, ``eval`` may resolve to tests/eval."""
    spec = importlib.util.spec_from_file_location("_redact_reference", ROOT / "eval" / "perf" / "redact_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_reference()


def _history_texts() -> list[str]:
    path = ROOT / "examples" / "shop-api-history.jsonl"
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(t[k]) for t in turns for k in ("user", "assistant") if t.get(k)]


def _corpus_texts() -> list[str]:
    texts = [t for _, t, _ in SECRETS] + [f"before {t} after" for _, t, _ in SECRETS] + list(BENIGN)
    texts.append(" ".join(t for _, t, _ in SECRETS))  # many secrets in one text (overlaps, priorities)
    files = sorted((ROOT / "eval" / "redaction").glob("*.json")) + [ROOT / "tests" / "fixtures" / "secrets_independent.json"]
    for path in files:
        doc = json.loads(path.read_text(encoding="utf-8"))
        texts += [c["text"] for c in doc.get("secrets", [])] + [c["text"] for c in doc.get("controls", [])]
    return texts


# One text per alternative a precheck lists (a provider prefix, a URL scheme, a secret word in
# several languages), so dropping any needle from a precheck makes a check below fail.
_PROSE_WORDS = ["password", "pasword", "passwort", "pw", "pwd", "pword", "passcode", "kennwort", "contraseña",
                "mot de passe", "mdp", "senha", "palavra-passe", "wachtwoord", "lösenord", "hasło", "haslo",
                "salasana", "parola d'ordine", "clave", "api key", "token", "secret", "creds", "pass", "auth", "login"]
_ALNUM36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
WITNESSES = (
    [f"{p}IOSFODNN7EXAMPLE" for p in ("AKIA", "ASIA", "ABIA", "ACCA", "A3TX")]
    + [f"{p}_{_ALNUM36}" for p in ("ghp", "gho", "ghu", "ghs", "ghr")]
    + [f"{p}-{_ALNUM36[:24]}" for p in ("glpat", "gldt", "glrt", "glptt")]
    + [f"{p}.{_ALNUM36}" for p in ("hvs", "hvb", "hvr")]
    + ["xapp-1-A1B2C3D4E5F6G7", "https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwxyz",
       "https://x.io/a?sig=abcdefgh123", "x=1&token=abcdefgh123", "'password': abc",
       "NTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
       "OTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
       "mariadb -h db -pS3cretpw", "tool --host db -u admin -pS3cretpw", "SharedAccessKey=abcdefgh12345678"]
    + [f"{s}://u:pw1234@db" for s in ("postgresql", "mysql", "mariadb", "mongodb+srv", "rediss", "amqps", "mssql",
                                      "sqlserver", "cockroachdb", "clickhouse")]
    + [f"run --{f} abc123" for f in ("password", "passwd", "token", "api-key", "secret", "client-secret")]
    + [t.format(k) for k in ("password", "passwd", "passphrase", "db_secret", "token", "credentials", "api_key",
                             "apikey", "signing-key")
       for t in ('{} = "abc"', '{} "abc"', "{}=abc", '"{}": abc', "{}: abc")]
    + [t.format(w) for w in _PROSE_WORDS
       for t in ("the {} is Xy12!abc", "use Xy12!abc as the {}", "Xy12!abc is the {}", "the {} is 40e5f7a9")]
    + [f"{w} 4471 or {w} is 8421-AB12" for w in ("door code", "PIN", "puk", "combo", "combination", "codice",
                                                 "código", "codigo")]
    + ["the pass phrase is correct horse battery staple", "use the phrase 'open sesame' for the password"]
)
HISTORY = _history_texts()
CORPUS = _corpus_texts() + WITNESSES

FindFn = Callable[[str], object]


def mismatches(texts: Iterable[str], find_a: FindFn = new.find_secrets, redact_a: FindFn = new.redact,
               find_b: FindFn = ref.find_secrets, redact_b: FindFn = ref.redact) -> list[str]:
    """The texts on which ``find_secrets`` or ``redact`` of the two implementations differ."""
    return [t for t in texts if find_a(t) != find_b(t) or redact_a(t) != redact_b(t)]


def test_the_corpora_are_there() -> None:  # control: the checks below do look at texts with secrets
    assert len(HISTORY) > 300 and len(CORPUS) > 400
    assert sum(bool(ref.find_secrets(t)) for t in CORPUS) > 200
    assert any(ref.find_secrets(t) for t in HISTORY)


def test_example_history_is_redacted_identically() -> None:
    assert mismatches(HISTORY) == []


def test_redaction_corpora_are_redacted_identically() -> None:
    assert mismatches(CORPUS) == []


def test_the_detectors_are_those_of_the_reference() -> None:
    """Kinds, patterns and their order are unchanged (so the opencode plugin's JavaScript copy is too)."""
    def table(module: object) -> list[tuple[str, str, int]]:
        return [(d.kind, d.pattern.pattern, d.pattern.flags) for d in module._DETECTORS]  # type: ignore[attr-defined]
    assert table(new) == table(ref)
    for name in ("_CONTEXT", "_URL", "_STRONG", "_PASSWORD_SHAPE", "_NOT_A_VALUE", "_MARKER"):
        assert getattr(new, name).pattern == getattr(ref, name).pattern, name
    assert new._NEARBY_CHARS == ref._NEARBY_CHARS
    assert new._COMMON == ref._COMMON and new._PRONOUN_VALUE == ref._PRONOUN_VALUE


# ---- random text ------------------------------------------------------------------------------
# Letters, digits and the punctuation the detectors care about, plus the four non-ASCII
# characters Python's re matches with an ASCII letter when ignoring case (İ ı ſ and the Kelvin
# sign), a few other letters and a non-ASCII digit.
_ALPHABET = (string.ascii_letters + string.digits + "_-=:/@.!#$%^&*'\"`?;,()[]{}<>+~\\ \t\n"
             + "\u0130\u0131\u017f\u212añłö“”’→٣")
_WORDS = [
    "password", "passwd", "pasword", "Passwort", "pw", "pwd", "passphrase", "pass phrase", "phrase", "token",
    "api_key", "API_KEY", "apikey", "secret", "client_secret", "credentials", "creds", "auth", "login", "key",
    "PIN", "pin", "door code", "code", "combo", "value", "mot de passe", "contraseña", "hasło", "clave",
    "paſsword", "to\u212aen", "L\u0130GİN", "ſecret", "ghp_", "gho_", "github_pat_", "glpat-", "npm_", "pypi-AgE",
    "xoxb-", "xapp-1-", "sk-", "sk-ant-api03-", "sk_live_", "whsec_", "AKIA", "ASIA", "A3TX", "AIza", "hf_", "SK",
    "SG.", "eyJ", ":AA", "shpat_", "dop_v1_", "hvs.", "WIFI:T:WPA;S:net;P:", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "://", "https://", "postgres://", "redis://", "user:", "@", "@db.internal",
    "?sig=", "&token=", "AccountKey=", "Authorization: ", "Bearer ", "bearer ", "X-Api-Key: ", "-u ", "--user ",
    "-p", "-p ", "--password ", "--token ", "mysql ", "sshpass ", "machine h login bob password ", "=", " = ",
    ":", ": ", "=>", ":=", "==", '"', "'", "`", " is ", " was ", " as the ", " to ", " for the ", "\n", "\n\n", " ",
    "[REDACTED:jwt]", "[REDACTED:", "]", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "8eb160ac7f4e37441cc47b4d020c672f",
    "Maple-Lynx-66!", "Tr0ub4dor&3", "hunter2", "12345678", "4471", "1-9-7-3-0", "MTA4NzY1NDMyMTAxMjM0NTY3OA.",
    "GhIjKl.", "sunshine", "policy", "manager", "\u0663\u0664\u0665",
]
_FRAGMENT = st.one_of(
    st.sampled_from(_WORDS).flatmap(lambda w: st.sampled_from([w, w.upper(), w.title()])),
    st.text(alphabet=_ALPHABET, max_size=12),
)
TEXTS = st.lists(_FRAGMENT, max_size=24).map("".join)
# Few fragments: a detector's words alone, without the others that would let its precheck pass anyway.
SHORT_TEXTS = st.lists(_FRAGMENT, max_size=5).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_random_text_is_redacted_identically(text: str) -> None:
    assert new.find_secrets(text) == ref.find_secrets(text)
    assert new.redact(text) == ref.redact(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHORT_TEXTS)
def test_short_random_text_is_redacted_identically(text: str) -> None:
    assert new.find_secrets(text) == ref.find_secrets(text)
    assert new.redact(text) == ref.redact(text)


# ---- each precheck is a necessary condition -------------------------------------------------
def _precheck(det: new._Detector, text: str) -> bool:
    """Whether ``det``'s precheck lets it run on ``text`` (as _raw_hits decides it)."""
    hay = new._fold(text) if det.folded else text
    if det.digit and not re.search(r"\d", text):
        return False
    return all(any(n in hay for n in group) for group in det.needs)


def _skipped_matches(text: str) -> list[str]:
    """Detectors (and parts of the paragraph walk) a precheck skips although they match ``text``."""
    bad = [f"{i} {d.kind}" for i, d in enumerate(new._DETECTORS) if d.pattern.search(text) and not _precheck(d, text)]
    folded = new._fold(text)
    if new._CONTEXT.search(text) and not any(n in folded for n in new._CONTEXT_NEEDLES):
        bad.append("_CONTEXT")
    if new._STRONG.search(text) and not re.search(r"\d", text):
        bad.append("_STRONG")
    if new._PASSWORD_SHAPE.search(text) and not any(c in text for c in new._SHAPE_SYMBOLS):
        bad.append("_PASSWORD_SHAPE")
    if new._URL.search(text) and "://" not in text:
        bad.append("_URL")
    return bad


def test_prechecks_hold_wherever_a_detector_matches_in_the_corpora() -> None:
    assert {t: b for t in HISTORY + CORPUS if (b := _skipped_matches(t))} == {}


@settings(max_examples=1500, deadline=None)
@given(st.one_of(TEXTS, SHORT_TEXTS))
def test_prechecks_hold_wherever_a_detector_matches_in_random_text(text: str) -> None:
    assert _skipped_matches(text) == []


def test_prechecks_hold_on_every_pair_of_fragments() -> None:
    """Every two fragments side by side (a word and its value, a marker and a token, ...)."""
    words = [w for w in _WORDS if w.strip()]
    assert {f"{a} {b}": bad for a in words for b in words if (bad := _skipped_matches(f"{a} {b}"))} == {}


def test_every_detector_and_precheck_is_exercised() -> None:  # control: the checks above are not vacuous
    texts = HISTORY + CORPUS
    matched = {i for i, d in enumerate(new._DETECTORS) for t in texts if d.pattern.search(t)}
    assert len(matched) >= 40, sorted(set(range(len(new._DETECTORS))) - matched)
    skipped = sum(not _precheck(d, t) for d in new._DETECTORS for t in HISTORY)
    assert skipped > len(HISTORY) * len(new._DETECTORS) // 2  # most detectors are skipped on ordinary turns


def test_case_folding_agrees_with_re_on_every_code_point() -> None:
    """A (?i) match of a needle character implies that character in the folded text.

    Every code point that re (ignoring case) matches with a character of some folded needle
    folds to exactly that character, so a (?i) match of a needle is the needle in _fold(text).
    """
    needle_chars = sorted({c for g, folded in new._GROUPS if folded for n in g for c in n} |
                          {c for n in new._CONTEXT_NEEDLES for c in n})
    any_char = re.compile("(?i)[" + "".join(re.escape(c) for c in needle_chars) + "]")
    single = {c: re.compile("(?i)" + re.escape(c)) for c in needle_chars}
    wrong = []
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if any_char.fullmatch(ch):
            wrong += [(hex(code), c, new._fold(ch)) for c in needle_chars if single[c].fullmatch(ch) and new._fold(ch) != c]
    assert wrong == []
    assert new._fold("PA\u017fSWORD \u0130D \u212aEY") == "password id key"  # control: the special cases fold


def test_needles_of_case_insensitive_detectors_are_folded() -> None:
    for d in new._DETECTORS:
        for group in d.needs:
            assert group and all(group), d.kind
            if d.folded:
                assert all(n == new._fold(n) for n in group), d.kind


# ---- positive controls: the checks above would catch a difference -----------------------------
def test_mismatches_reports_a_deliberately_different_function() -> None:
    def dropping_last_hit(text: str) -> object:
        return ref.find_secrets(text)[:-1]

    texts = [t for _, t, _ in SECRETS]
    assert mismatches(texts, find_a=dropping_last_hit, redact_a=ref.redact) == texts  # every text has a hit
    assert mismatches(texts, find_a=ref.find_secrets, redact_a=ref.redact) == []


def test_the_random_text_property_finds_a_wrong_precheck(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the `key=value` assignment detector behind a precheck that is not necessary, the
    random texts above soon show a difference (and the precheck test flags the detector)."""
    index = next(i for i, d in enumerate(new._DETECTORS) if d.pattern.pattern.endswith(rf"(?P<secret>{new._BARE})")
                 and "(?:=|:=)" in d.pattern.pattern)
    begin = next(g for g, (needles, folded) in enumerate(new._GROUPS) if needles == ("-----BEGIN ",) and not folded)
    groups = list(new._DETECTOR_GROUPS)
    groups[index] = (begin,)  # runs only when a private key is in the text: not a necessary condition
    monkeypatch.setattr(new, "_DETECTOR_GROUPS", tuple(groups))
    found = find(TEXTS, lambda t: new.find_secrets(t) != ref.find_secrets(t),
                 settings=settings(max_examples=5000, database=None, deadline=None))
    assert "=" in found
    monkeypatch.setattr(new, "_DETECTORS", new._DETECTORS[:index] + (new._DETECTORS[index]._replace(
        needs=(("-----BEGIN ",),), folded=False),) + new._DETECTORS[index + 1:])
    assert f"{index} secret_assignment" in _skipped_matches(found)
