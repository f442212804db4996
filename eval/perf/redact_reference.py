"""The ``engine/redact.py`` detectors as they were before the prechecks: the oracle.

Kept verbatim (every detector run on every text, every paragraph walked) so tests and
``eval.perf.redact_speed`` can check the faster :mod:`engine.redact` returns the same
``find_secrets`` hits and the same ``redact`` output on every input.

The original module docstring follows.

Find and redact secrets in text before anything is stored or sent to a model.

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
    _d("vault_token", rf"{_L}hv[sbr]\.[A-Za-z0-9_-]{{24,}}{_R}"),
    # the Wi-Fi QR code format: WIFI:T:WPA;S:<ssid>;P:<password>;;
    _d("wifi_password", r"(?i)\bWIFI:(?:[A-Z]:(?:[^;\\]|\\.)*;)*?P:(?P<secret>(?:[^;\\\s]|\\.)+)"),
    # signatures and keys in URL query strings (signed URLs, SAS tokens, ?api_key=)
    _d("url_secret",
       r"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|access_token|token|"
       r"api_?key|key|secret|client_secret|password|passwd|pwd|auth)=(?P<secret>[^&\s#'\"<>]{8,})"),
    # curl -u user:password, and -p PASSWORD / -pPASSWORD on a login command line
    _d("cli_secret_flag", r"(?<![\w-])(?:-u|--user)[ \t]+[\"']?[^\s:'\"]+:(?P<secret>[^\s'\"@]+)"),
    _d("cli_secret_flag",
       r"(?im)^(?=[^\n]*(?:\blogin\b|\bsshpass\b|\bmysql(?:dump|admin)?\b|\bmariadb\b|[ \t]-u[ \t]))[^\n]*?"
       r"(?<![\w-])-p[ \t]*(?P<q>[\"']?)(?P<secret>(?!\d+(?:\s|$))[^\s'\"]{3,})(?P=q)"),
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
    # key "value" (Gradle, Groovy, nginx and similar configs: a space, no '=')
    _d(
        "secret_assignment",
        # (?i) on the whole pattern, not a scoped (?i:...): the rest has no letters, and the
        # opencode plugin's JavaScript copy of these detectors has no scoped flags.
        rf"(?i)(?<![A-Za-z0-9_.-]){_KEY}[ \t]+(?P<q>[\"'])(?P<secret>[^\"'\n]{{1,500}})(?P=q)",
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
        r"auth[ _-]?token|private[ _-]?key|key|value)\b(?![ \t]+fingerprints?\b)[^\n]{0,60}?"
        rf"{_L}(?<!:)(?P<secret>(?=[A-Za-z0-9+/_-]*\d)[A-Za-z0-9+/_-]{{32,}}={{0,2}}){_R}",
    ),
)

# ---- secrets said in prose ------------------------------------------------------------------
# "the staging db password is Maple-Otter-42!", "db password: X", "pw X", "use X as the postgres
# password", "X is the wifi password", "the passphrase is correct horse battery staple",
# "PIN 4471", "the alarm code is 1-9-7-3-0", "set the deploy token to X", and the same in a few
# other languages ("das Passwort ist X", "la contraseña es X", "le mot de passe est X"). The
# value is one token (a passphrase: the rest of the clause); whether it is a secret is decided
# by its shape in :func:`_prose_value_ok`, never by the words around it.
# Words whose value is a secret even when it is a plain word ("the wifi password is sunshine");
# common misspellings included ("pasword", "passwrod").
_PASS_WORD = (r"(?:pas{1,2}w(?:or|ro|r|o)?ds?|pwd|pword|pw|passcodes?|"
              r"passwort|kennwort|contrase[ñn]a|mot[ \t]+de[ \t]+passe|mdp|senha|palavra-passe|wachtwoord|"
              r"l[öo]senord|has[łl]o|salasana|parola[ \t]+d'ordine|clave)")
_PHRASE_WORD = r"(?:pass[ -]?phrases?|(?:seed|recovery|mnemonic|wallet|secret)[ \t]+phrases?)"
# Words whose value is a secret only when it looks like one (a digit, a symbol, mixed case).
_KEY_WORD = (r"(?:(?:api|access|secret|private|signing|encryption|master|account|auth|client|app|deploy|bot|"
             r"license|licence|product|session|service|root|admin)[ _-]?(?:key|token|secret)s?|tokens?|secrets?|"
             r"credentials?|creds|pass|auth|login)")
# Short numeric or grouped codes: "door code", "backup code", "PIN", "PUK", "combo".
_CODE_WORD = (r"(?:(?:door|gate|entry|alarm|safe|lock|unlock|keypad|backup|recovery|security|verification|access|"
              r"one-time|otp|2fa|mfa|sms|sim|garage|building)[ \t-]?codes?|pins?(?:[ -]?(?:code|number))?|puks?|"
              r"combos?|combinations?|codice|c[óo]digo)")
# A secret word used as a modifier is about the secret, not its value ("password policy").
_MODIFIER = (r"(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|"
             r"files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|"
             r"box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|"
             r"scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|"
             r"holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|"
             r"headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)")
_VERB = (r"(?:(?<!\w)(?:is|was|are|were|ist|es|est|[ée]|è|er|är|jest|on|to|becomes|will\s+be|should\s+be|"
         r"equals|of)(?!\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|→|['’]s)")
_ADVERB = r"(?:[ \t]+(?:just|now|still|probably|actually|simply|literally|currently|again|also|always))?"
_QUOTED = r"(?<![\w'’])(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|“[^”\n]{1,200}”)"
# One token, stopping before trailing sentence punctuation ("is hunter2." keeps the period).
_TOKEN = r"[^\s\"'`“”]{1,200}?(?=[.,;:?)\]]*(?:\s|$))"
# A filler word: never ends a sentence (no final '.', '!' or '?'), so a value is looked for in one.
_WORD = r"[ \t]+(?!(?:is|was|are|were|to|as|and|but)\b)[\w./@~()!-]*[\w/@~()](?![\w.@~!-])"
_FILLER = rf"(?:{_WORD}){{0,8}}?"
_LONG_FILLER = rf"(?:{_WORD}){{0,14}}?"
# "<word> ... is X", or "pw X" (a password word only): a value right after the word needs a space.
_SAYS = rf"(?:{_FILLER}[ \t]*{_VERB}{_ADVERB}[ \t]*|[ \t]+)"
_SAYS_VERB = rf"{_FILLER}[ \t]*{_VERB}{_ADVERB}[ \t]*"
_PROSE: tuple[tuple[str, str], ...] = (
    # passphrase: the rest of the clause, however many words
    ("passphrase",
     rf"(?i)(?<![\w-]){_PHRASE_WORD}(?![\w-])(?:{_FILLER}[ \t]*{_VERB}{_ADVERB}[ \t]*(?P<secret>{_QUOTED}"
     r"|[^\s\"'`“”][^\n,;:!?()]{0,200}?[^\s.,;:!?()](?=[ \t]*(?:[.,;:!?()\n]|$|\band\b|\bbut\b|\bso\b)))"
     rf"|[ \t]+(?P<quoted>{_QUOTED}))"),
    # "use the phrase `X`" in a passage about a password, a key or a password flag (checked in _raw_hits)
    ("phrase_in_context",
     rf"(?i)(?<![\w-])phrases?(?![\w-])(?:[ \t]*(?:{_VERB})?)[ \t]*(?P<secret>{_QUOTED})"),
    # "<thing> password is X", "password for the admin: X", "set the password to X", "pw X"
    ("prose_password",
     rf"(?i)(?<![\w-]){_PASS_WORD}(?![\w-])(?![ \t]+{_MODIFIER}\b){_SAYS}(?P<secret>{_QUOTED}|{_TOKEN})"),
    # "PIN 4471", "the alarm code is 1-9-7-3-0", "backup code if locked out: 48213-90571"
    ("prose_code",
     rf"(?i)(?<![\w-]){_CODE_WORD}(?![\w-])(?![ \t]+{_MODIFIER}\b){_LONG_FILLER}[ \t]*(?:{_VERB}{_ADVERB}[ \t]*)?"
     r"(?<![\w.,-])(?P<secret>(?:\d[ -]?){3,11}\d|(?=[A-Za-z-]*\d)[A-Za-z0-9]{3,8}(?:-[A-Za-z0-9]{3,8}){1,5})"
     r"(?![\w.])"),
    ("prose_secret",
     rf"(?i)(?<![\w-]){_KEY_WORD}(?![\w-])(?![ \t]+{_MODIFIER}\b){_SAYS_VERB}(?P<secret>{_QUOTED}|{_TOKEN})"),
    # "use X as the postgres password", "with X as our token": X is named the secret
    ("prose_password",
     rf"(?i)(?<!\S)(?P<secret>{_QUOTED}|[^\s\"'`“”]{{1,200}})[ \t]+as[ \t]+"
     rf"(?:(?:the|our|my|your|a|an|his|her|their|its)[ \t]+)?(?:[\w.-]+[ \t]+){{0,4}}?{_PASS_WORD}"
     rf"(?![\w-])(?![ \t]+{_MODIFIER}\b)"),
    # "X is the wifi password", "X as the deploy token": only when X looks like a secret
    ("prose_secret",
     rf"(?i)(?<!\S)(?P<secret>{_QUOTED}|[^\s\"'`“”]{{1,200}})[ \t]+(?:is|was|will[ \t]+be|as)[ \t]+"
     rf"(?:(?:the|our|my|your|a|an|his|her|their|its)[ \t]+)?(?:[\w.-]+[ \t]+){{0,4}}?(?:{_PASS_WORD}|{_KEY_WORD})"
     rf"(?![\w-])(?![ \t]+{_MODIFIER}\b)"),
)
# A credential-shaped token near a secret word (or an already redacted secret), either side
# of it, in the same paragraph ("use 2395c447... for Datadog, it goes in DD_API_KEY"; "id
# AKIA... / <secret key>"): 20+ characters mixing letters and digits, 8-64 mixing letters,
# digits and a symbol ("Maple-Lynx-66!"), or 8-64 mixing upper case, lower case and digits.
_NEARBY_CHARS = 100
_CONTEXT = re.compile(
    rf"(?i)pas{{1,2}}w(?:or|ro|r|o)?d|passphrase|passcode|secret|token|api[_ -]?key|access[_ -]?key|"
    rf"private[_ -]?key|auth|credential|creds|login|(?<=_)key(?![a-z])|"
    rf"(?<![\w-])(?:key|pin|pw|pwd|pass|{_PASS_WORD})(?![\w-])|\[REDACTED:[a-z0-9_]+\]|"
    r"(?<![\w-])(?:-p|--pass(?:word)?|--passphrase|-passin|-passout)(?![\w-])")
# URLs are left to the URL detectors (userinfo, query secrets): their paths are full of ids.
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://\S+")
_STRONG = re.compile(
    r"(?<![\w/+=.@:-])(?:(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])[A-Za-z0-9+/_-]{20,400}={0,2}"
    r"|(?=[A-Za-z0-9!@#$%^&*?~+_-]*\d)(?=[A-Za-z0-9!@#$%^&*?~+_-]*[A-Za-z])"
    r"(?=[A-Za-z0-9!@#$%^&*?~+_-]*[!@#$%^&*?~+])[A-Za-z0-9!@#$%^&*?~+_-]{8,64}"
    r"|(?=(?:[A-Za-z_-]*\d){2})(?=[A-Za-z0-9_-]*[a-z])(?=(?:[a-z0-9_-]*[A-Z]){2})[A-Za-z0-9_-]{8,64})"
    r"(?![\w/+=@-])")
# Password-shaped wherever it stands: upper and lower case, a digit and a symbol inside the token.
_PASSWORD_SHAPE = re.compile(
    r"(?<![\w/+=.@:-])(?=[A-Za-z0-9!#$%^&*_-]*[a-z])(?=[A-Za-z0-9!#$%^&*_-]*[A-Z])(?=[A-Za-z0-9!#$%^&*_-]*\d)"
    r"[A-Za-z0-9_-]+[!#$%^&*][A-Za-z0-9!#$%^&*_-]*[A-Za-z0-9][!#$%^&*]?(?![\w/+=@-])")


def _nearby_hits(text: str) -> list[tuple[int, int]]:
    """Credential-shaped tokens near a secret word in the same paragraph, and password-shaped ones."""
    out: list[tuple[int, int]] = []
    for para in re.finditer(r"(?:[^\n]|\n(?![ \t]*\n))+", text):
        base = para.start()
        body = _URL.sub(lambda m: " " * len(m.group()), para.group())  # same offsets, URLs blanked
        words = [m.span() for m in _CONTEXT.finditer(body)]
        for tok in _STRONG.finditer(body) if words else ():
            start, end = tok.span()
            if any(ws - _NEARBY_CHARS <= end and start <= we + _NEARBY_CHARS and not (ws >= start and we <= end)
                   for ws, we in words):
                out.append((base + start, base + end))
        out.extend((base + m.start(), base + m.end()) for m in _PASSWORD_SHAPE.finditer(body)
                   if 8 <= len(m.group()) <= 64)
    return out


# Lowest priority: a provider-shaped token inside one of these keeps its provider's kind.
_DETECTORS = _DETECTORS + tuple(_d(kind, pattern) for kind, pattern in _PROSE)
_PROSE_KINDS = frozenset(kind for kind, _ in _PROSE)

# Plain words that follow a secret word without being its value ("the password is required").
_COMMON = frozenset("""
a an the this that these those it its here there what which who where when how why not no none nothing null nil
is are was were be been being to of in on at by for from with without into as and or but so if then than also too
still now just only very really always never already yet again same different other another any some all every
each both either neither one two three first last next new old my our your his her their we you they i me us them
set unset stored kept saved required optional needed missing empty blank wrong right correct incorrect invalid valid
expired revoked rotated changed reset weak strong long short fine ok okay good bad secret private public encrypted
hashed hidden masked redacted unknown known shared below above attached elsewhere available unavailable ready gone
lost leaked compromised safe secure insecure random managed configured defined provided sent generated mandatory
enforced checked used ignored cached logged printed displayed shown visible exposed fixed static dynamic temporary
permanent case sensitive must should will would can could may might need needs use uses using please see check
do does did done have has had get gets got make makes made protected stale active inactive disabled enabled
local remote default standard usual same identical unchanged rotating expiring something somewhere someone
in-place inline elsewhere separately there's it's that's don't isn't aren't wasn't weren't won't can't
via through over under per each prompt prompted asked asking twice once later soon today yesterday tomorrow
""".split())
_PRONOUN_VALUE = frozenset({"it", "this", "that", "which", "what", "there", "here", "mine", "yours", "ours",
                            "one", "something", "anything", "everything", "nothing", "same"})
_QUOTES = "\"'`“”"


def _prose_value_ok(kind: str, value: str) -> bool:
    """Whether a value found after (or before) a secret word in prose looks like a secret."""
    v = value.strip()
    quoted = len(v) > 2 and v[0] in _QUOTES
    v = v.strip(_QUOTES).strip() if quoted else v
    low = v.casefold()
    if not v or not any(c.isalnum() for c in v) or low in _COMMON or low in _PRONOUN_VALUE:
        return False
    if _MARKER.search(v) or (not quoted and _NOT_A_VALUE.match(v)):
        return False  # unquoted code (self.token, get_password()) names a value; quoted text is one
    if "://" in v or v.startswith(("/", "~", "$", "%", "<", "{", "[")):
        return False  # a URL, a path or a placeholder names where the secret is, not the secret
    if kind in ("passphrase", "prose_code", "phrase_in_context"):
        return True  # the pattern itself fixed the shape (a clause; digits or grouped code)
    if " " in v:
        # a quoted phrase named as the secret; backticks around words are a command ("pass: `make test`")
        return quoted and (kind == "prose_password" or value.strip()[0] != "`")
    core = v.rstrip("!?") or v  # "delicious!" is a word with an exclamation mark, not a password
    shaped = (any(c.isdigit() for c in core) or any(not c.isalnum() and c not in "-_." for c in core)
              or any(c.isupper() for c in core[1:]))
    if shaped:
        number = re.fullmatch(r"v?\d+(?:\.\d+)*[a-z]?|\d+(?:ms|s|m|h|d|kb|mb|gb|%)?", low)
        return not number or kind == "prose_password"
    # "the wifi password is sunshine": a plain word only after a password word
    return kind == "prose_password" and v.isalpha() and len(v) >= 4 and not low.endswith(("ed", "ing", "ly"))


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
    if kind in _PROSE_KINDS:
        return not _prose_value_ok(kind, value)
    return kind in {"secret_assignment", "cli_secret_flag"} and bool(_NOT_A_VALUE.match(value))


def _raw_hits(text: str) -> list[tuple[int, int, int]]:
    """Every detector match as (start, end, priority), before merging."""
    hits: list[tuple[int, int, int]] = []
    for priority, (kind, pattern) in enumerate(_DETECTORS):
        for match in pattern.finditer(text):
            if kind == "phrase_in_context" and not _CONTEXT.search(
                    text[max(0, match.start() - _NEARBY_CHARS):match.end() + _NEARBY_CHARS].replace(match.group(), " ")):
                continue
            if "secret" in pattern.groupindex:
                group = "quoted" if "quoted" in pattern.groupindex and match.group("quoted") else "secret"
                start, end = match.span(group)
                if _value_is_code(kind, match.group(group)):
                    continue
            else:
                start, end = match.span()
            if end > start:
                hits.append((start, end, priority))
    nearby = len(_DETECTORS)  # lowest priority: "secret_nearby"
    hits.extend((start, end, nearby) for start, end in _nearby_hits(text))
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
    return [SecretHit(_DETECTORS[p].kind if p < len(_DETECTORS) else "secret_nearby", s, e) for s, e, p in merged]


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
