"""Find and redact secrets in text before anything is stored or sent to a model.

Pure: regular expressions only, no I/O. Each detector is a named pattern; a pattern with
a ``secret`` group redacts only that group and keeps its context (``password=`` stays,
``postgres://admin:`` and ``@db:5432`` stay), otherwise the whole match goes. The
replacement is ``[REDACTED:<kind>]``.

Two rules make :func:`redact` idempotent by construction:

- an existing ``[REDACTED:...]`` marker is never matched again (hits touching one are
  dropped), so redacted text is stable;
- :func:`redact` repeats until no detector fires, so text uncovered by one pass (for
  example an assignment whose value was a provider token) is handled in the same call.

Detectors favour precision on ordinary developer text: ports, versions, short git SHAs,
UUIDs, paths and prose such as "password policy" are left alone. Generic assignments
(``token = ...``) only fire when the key *ends* with a secret word, so ``max_tokens=512``
and ``token_budget=10`` are kept, and values that look like code (``get_password()``,
``$VAR``, ``None``, ``self.token``) are skipped.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")

# Word-ish boundaries for tokens whose alphabet includes '-' and '_' (\b would split there).
_L = r"(?<![A-Za-z0-9_-])"
_R = r"(?![A-Za-z0-9_-])"
_B64URL = r"[A-Za-z0-9_-]"

# Keys whose values are secrets: the key must END with one of these words.
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|secret|token|credentials?|"
    r"(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)"
)
_KEY = rf"[A-Za-z0-9_.-]*{_SECRET_WORD}"
# Unquoted values stop at whitespace, quotes and the usual delimiters of URLs, INI, JSON.
_BARE = r"[^\s'\"`;&,<>)\]}]+"


class SecretHit(NamedTuple):
    """A secret found in text: what kind, and the [start, end) span to replace."""

    kind: str
    start: int
    end: int


class _Detector(NamedTuple):
    kind: str
    pattern: re.Pattern[str]


def _d(kind: str, pattern: str, flags: int = 0) -> _Detector:
    return _Detector(kind, re.compile(pattern, flags))


# Order is priority: when hits overlap, their union is redacted under the kind listed first.
_DETECTORS: tuple[_Detector, ...] = (
    _d(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        # no END (a pasted or truncated key): the base64 lines and headers that follow
        r"|(?:[ \t]*\r?\n(?:[A-Za-z0-9-]+:[^\n]*|[A-Za-z0-9+/=]+))*)",
    ),
    _d("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    _d(
        "aws_secret_access_key",
        r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*(?:=|:|=>)\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    ),
    _d("github_token", rf"{_L}(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{{36,255}}{_R}"),
    _d("github_token", rf"{_L}github_pat_[A-Za-z0-9_]{{22,255}}{_R}"),
    _d("gitlab_token", rf"{_L}gl(?:pat|dt|rt|ptt)-{_B64URL}{{20,}}{_R}"),
    _d("npm_token", rf"{_L}npm_[A-Za-z0-9]{{36}}{_R}"),
    _d("pypi_token", rf"{_L}pypi-AgE{_B64URL}{{50,}}{_R}"),
    _d("slack_token", rf"{_L}xox[abposr]-[A-Za-z0-9-]{{10,}}{_R}"),
    _d("slack_token", rf"{_L}xapp-\d-[A-Za-z0-9-]{{10,}}{_R}"),
    _d("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}"),
    _d(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
    ),
    _d("stripe_key", rf"{_L}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_R}"),
    _d("stripe_key", rf"{_L}whsec_[A-Za-z0-9]{{24,}}{_R}"),
    _d("anthropic_key", rf"{_L}sk-ant-(?:[a-z]+\d*-)?{_B64URL}{{20,}}{_R}"),
    _d(
        "openai_key",
        rf"{_L}sk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z_-]*\d){_B64URL}{{20,}}{_R}",
    ),
    _d("google_api_key", rf"{_L}AIza{_B64URL}{{35}}{_R}"),
    _d("huggingface_token", rf"{_L}hf_[A-Za-z0-9]{{34,}}{_R}"),
    _d("twilio_key", r"\bSK[0-9a-fA-F]{32}\b"),
    _d("sendgrid_key", rf"{_L}SG\.{_B64URL}{{16,32}}\.{_B64URL}{{30,50}}{_R}"),
    _d(
        "discord_token",
        rf"{_L}[MNO]{_B64URL}{{23,27}}\.{_B64URL}{{6,7}}\.{_B64URL}{{27,40}}{_R}",
    ),
    _d("telegram_token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    _d("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    _d("digitalocean_token", r"\bdo[pro]_v1_[a-f0-9]{64}\b"),
    _d("jwt", rf"{_L}eyJ{_B64URL}{{8,}}\.{_B64URL}{{8,}}\.{_B64URL}{{8,}}{_R}"),
    # Connection strings first, so a database URL is reported as such; both keep user and host.
    _d(
        "connection_string",
        r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|"
        r"mssql|sqlserver|cockroachdb|clickhouse)(?:\+[a-z0-9]+)?://[^\s:/@'\"]*:"
        r"(?P<secret>[^\s@/'\"]+)@(?=[A-Za-z0-9\[._-])",
    ),
    _d(
        "url_password",
        r"(?i)\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@'\"]*:(?P<secret>[^\s@/'\"]+)@(?=[A-Za-z0-9\[._-])",
    ),
    _d(
        "connection_string",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<secret>[^;\s'\"]{8,})",
    ),
    _d(
        "authorization",
        r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+"
        r"(?P<secret>[A-Za-z0-9._~+/=-]{6,})",
    ),
    _d("bearer_token", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    _d(
        "api_key_header",
        r"(?i)\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token)[\"']?\s*:\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
    ),
    _d("netrc_password", r"\blogin\s+\S+\s+password\s+(?P<secret>\S+)"),
    _d(
        "cli_secret_flag",
        r"(?i)(?<![\w-])--(?:password|passwd|token|api-key|secret|client-secret)\s+"
        r"(?P<q>[\"']?)(?P<secret>[^\s'\"]{3,})(?P=q)",
    ),
    # key = "value" / key: 'value' / "key": "value" (quoted value, any separator context)
    _d(
        "secret_assignment",
        rf"(?i)(?<![A-Za-z0-9_.-]){_KEY}[\"']?\s*(?::=|=>|=|:)\s*(?P<q>[\"'])"
        r"(?P<secret>(?:(?!(?P=q))[^\n\\]|\\.){1,500})(?P=q)",
    ),
    # key=value (shell, .env, INI, URL query): unquoted, '=' but not '=='
    _d(
        "secret_assignment",
        rf"(?i)(?<![A-Za-z0-9_.-]){_KEY}\s*(?<![=!<>])(?:=|:=)(?!=)\s*(?P<secret>{_BARE})",
    ),
    # "key": value  (JSON-ish, quoted key)
    _d(
        "secret_assignment",
        rf"(?i)[\"']{_KEY}[\"']\s*:\s*(?P<secret>{_BARE})",
    ),
    # key: value  on its own line (YAML); the value must be the rest of the line
    _d(
        "secret_assignment",
        rf"(?im)^[ \t-]*{_KEY}[ \t]*:[ \t]*(?P<secret>[^\s'\"#]+)[ \t]*$",
    ),
    # Prose: a long random-looking token shortly after a secret word ("the Datadog API key is
    # 8eb1...", "set the token to ...", "its value is ..."). 32+ characters of hex or base64
    # with at least one digit; a bare 40-hex git SHA in unrelated prose stays.
    _d(
        "secret_in_prose",
        r"(?i)\b(?:password|passwd|passphrase|secret|token|credentials?|api[ _-]?key|access[ _-]?key|"
        r"auth[ _-]?token|private[ _-]?key|key|value)\b[^\n]{0,60}?"
        rf"{_L}(?P<secret>(?=[A-Za-z0-9+/_-]*\d)[A-Za-z0-9+/_-]{{32,}}={{0,2}}){_R}",
    ),
)

# Values a secret-shaped key may hold that are not secrets: code, placeholders, literals.
_NOT_A_VALUE = re.compile(
    r"""(?ix)^(?:
        [$%{<*]                               # $VAR, ${VAR}, %VAR%, {{ tmpl }}, <placeholder>, ***
      | (?:none|null|nil|true|false|undefined|required|optional|str|string|bytes|int|
           secretstr|env|os\.environ.*|process\.env.*|xx+|\.\.\.+|-+)$
      | [A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$    # self.token, settings.api_key
      | .*[(\[]                               # get_password(), request.form["x"]
      | [a-z_]*(?:password|passwd|secret|token|key)[a-z_]*$   # password = new_password
    )"""
)


def _value_is_code(kind: str, value: str) -> bool:
    return kind in {"secret_assignment", "cli_secret_flag"} and bool(_NOT_A_VALUE.match(value))


def _raw_hits(text: str) -> list[tuple[int, int, int]]:
    """Every detector match as (start, end, priority), before merging."""
    hits: list[tuple[int, int, int]] = []
    for priority, (kind, pattern) in enumerate(_DETECTORS):
        for match in pattern.finditer(text):
            if "secret" in pattern.groupindex:
                start, end = match.span("secret")
                if _value_is_code(kind, match.group("secret")):
                    continue
            else:
                start, end = match.span()
            if end > start:
                hits.append((start, end, priority))
    return hits


def find_secrets(text: str) -> list[SecretHit]:
    """Find the secrets in ``text``: sorted, non-overlapping spans with their kinds.

    Overlapping matches are merged into one span reported under the highest-priority
    kind. Matches that touch an existing ``[REDACTED:...]`` marker are ignored.
    """
    markers = [m.span() for m in _MARKER.finditer(text)]

    def touches_marker(start: int, end: int) -> bool:
        return any(start < m_end and m_start < end for m_start, m_end in markers)

    hits = sorted(h for h in _raw_hits(text) if not touches_marker(h[0], h[1]))
    merged: list[list[int]] = []
    for start, end, priority in hits:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] = min(last[2], priority)
        else:
            merged.append([start, end, priority])
    return [SecretHit(_DETECTORS[p].kind, s, e) for s, e, p in merged]


def _redact_once(text: str, hits: list[SecretHit]) -> str:
    parts: list[str] = []
    cursor = 0
    for hit in hits:
        parts.append(text[cursor : hit.start])
        parts.append(f"[REDACTED:{hit.kind}]")
        cursor = hit.end
    parts.append(text[cursor:])
    return "".join(parts)


def redact(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; idempotent."""
    hits = find_secrets(text)
    while hits:
        text = _redact_once(text, hits)
        hits = find_secrets(text)
    return text


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would change ``text``."""
    return bool(find_secrets(text))
