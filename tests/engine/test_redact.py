"""Tests for engine.redact: secret shapes are removed, ordinary developer text is kept."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import redact as redact_module
from engine.redact import SecretHit, find_secrets, redact

# Fake credentials with the right shapes (none is real).
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA7bq9xZ3example0nlyFAKEkeyMaterialxyz\n"
    "b2xkZXIgbGluZSBvZiBrZXkgbWF0ZXJpYWw=\n"
    "-----END RSA PRIVATE KEY-----"
)

# (name, text with the secret in context, the part that must disappear)
SECRETS: list[tuple[str, str, str]] = [
    ("aws_access_key_id", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws_secret_access_key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("github_classic", f"token {GHP} pushed", GHP),
    ("github_oauth", "gho_" + "x9Y8z7W6v5U4t3S2r1Q0p9O8n7M6l5K4j3I2", "gho_x9Y8z7W6"),
    ("github_server", "ghs_" + "Z" * 20 + "1" * 16, "ghs_ZZZZ"),
    ("github_pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH", "github_pat_11ABC"),
    ("gitlab", "glpat-Ab12Cd34Ef56Gh78Ij90", "glpat-Ab12Cd34Ef56Gh78Ij90"),
    ("npm", "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm_a1B2c3"),
    ("pypi", "pypi-AgEIcHlwaS5vcmcCJGQ4YjQ0ZTg3LTAwZTEtNDBmNS1iMjY1LTQ2ZmE5ZjM5ZDQ5YQ", "pypi-AgEIcHlwaS5"),
    ("slack_bot", "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890"),
    ("slack_user", "xoxp-1234567890-0987654321-1122334455-abcdef0123456789", "xoxp-1234567890"),
    ("stripe_live", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe_test", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39Hq"),
    ("stripe_restricted", "rk_live_51H8AbCdEfGhIjKlMnOpQr", "rk_live_51H8"),
    ("openai_legacy", "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4", "sk-A1b2C3d4"),
    ("openai_project", "sk-proj-AbC123_dEf456-GhI789jKl012MnO345pQr678", "sk-proj-AbC123"),
    ("anthropic", "sk-ant-api03-AbCdEf123456_GhIjKl789012-MnOpQr345678stuVWX", "sk-ant-api03"),
    ("google_api_key", "AIzaSyD-1234567890abcdefghijklmnopqrstu", "AIzaSyD-1234567890"),
    ("jwt", f"cookie {JWT} set", JWT),
    ("private_key", f"the key:\n{PEM}\nthat was it", "MIIEpAIBAAKCAQEA7bq9xZ3example0nlyFAKEkeyMaterialxyz"),
    ("private_key_truncated", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("url_password", "clone https://alice:Sup3rS3cret!@git.example.com/repo.git", "Sup3rS3cret!"),
    ("postgres", "DATABASE_URL=postgres://app:pg-p4ss-word@db.internal:5432/app", "pg-p4ss-word"),
    ("mysql", "mysql://root:my5qlpw@127.0.0.1:3306/shop", "my5qlpw"),
    ("mongodb_srv", "mongodb+srv://svc:m0ng0Pa55@cluster0.ab1cd.mongodb.net/db", "m0ng0Pa55"),
    ("redis", "redis://:r3d1sPa55@cache:6379/0", "r3d1sPa55"),
    (
        "azure_account_key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4cXV1eA==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4cXV1eA==",
    ),
    ("password_assignment", "password=hunter2 in the env", "hunter2"),
    ("json_api_key", '{"api_key": "abcd-1234-efgh-5678"}', "abcd-1234-efgh-5678"),
    ("export_token", "export FOO_TOKEN=s3cr3tT0kenValue", "s3cr3tT0kenValue"),
    ("python_secret", 'client_secret = "qwe-rty-uio-123"', "qwe-rty-uio-123"),
    ("yaml_password", "db:\n  password: Tr0ub4dor&3\n  user: app", "Tr0ub4dor&3"),
    ("bearer_header", "curl -H 'Authorization: Bearer abc123def456ghi789' api", "abc123def456ghi789"),
    ("basic_header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("api_key_header", 'curl -H "X-Api-Key: 0123456789abcdef" https://api', "0123456789abcdef"),
    ("twilio", "SK" + "0123456789abcdef" * 2, "SK0123456789abcdef"),
    (
        "sendgrid",
        "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",
        "SG.ngeVfQFYQlKU0ufo8x5d1A",
    ),
    (
        "discord_bot",
        "MTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "MTA4NzY1NDMyMTAxMjM0NTY3OA",
    ),
    ("huggingface", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGh"),
    ("cli_flag", "mycli login --password 'n0tS0s3cret'", "n0tS0s3cret"),
    ("netrc", "machine api.example.com login bob password b0bsPa55", "b0bsPa55"),
]

BENIGN: list[str] = [
    "the api server listens on localhost:8080 and 0.0.0.0:9090",
    "upgrade ray to 2.40.1 and numpy>=1.26,<3 (python 3.11.7)",
    "fixed in commit a1b2c3d, reverted in deadbeef1234",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "edit /home/dev/.ssh/config and src/payments/stripe_client.py",
    "we agreed on a password policy: 12 characters minimum",
    "the token budget is 1000 and max_tokens=512",
    "set token_budget=20000 and secret_name=prod-db in the chart",
    "pip install scikit-learn; see sk-learn docs",
    "git@github.com:acme/widgets.git",
    "visit https://example.com/path?q=1&page=2",
    "mail alice@example.com about http://localhost:3000/api",
    "we use Bearer token authentication for the API",
    "export PATH=/usr/local/bin:$PATH",
    "password = get_password()",
    "token = os.environ['GITHUB_TOKEN']",
    "api_key = settings.api_key",
    "password: str = Field(...)",
    'export GITHUB_TOKEN="$(gh auth token)"',
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 dev@laptop",
    "run pytest -x tests/ and camelCaseName stays",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Password: must be rotated every 90 days",
    "the AKIA prefix marks AWS access key ids",
    "if token == expected: return",
    "[REDACTED:github_token] was already removed",
]


@pytest.mark.parametrize(("name", "text", "secret"), SECRETS, ids=[s[0] for s in SECRETS])
def test_secret_shape_is_redacted_and_context_kept(name: str, text: str, secret: str) -> None:
    wrapped = f"before {text} after"
    out = redact(wrapped)
    assert secret in wrapped  # positive control: the secret was there
    assert secret not in out
    assert "[REDACTED:" in out
    assert out.startswith("before ") and out.endswith(" after")


def test_there_are_at_least_twenty_distinct_kinds() -> None:
    kinds = {hit.kind for _, text, _ in SECRETS for hit in find_secrets(text)}
    assert len(kinds) >= 20, kinds


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_is_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


def test_benign_and_secret_in_one_text() -> None:
    text = f"port 8080, commit a1b2c3d, token {GHP}"
    assert redact(text) == "port 8080, commit a1b2c3d, token [REDACTED:github_token]"


def test_url_password_keeps_user_and_host() -> None:
    out = redact("postgres://admin:hunter22@db.example.com:5432/app")
    assert out == "postgres://admin:[REDACTED:connection_string]@db.example.com:5432/app"
    out = redact("https://bob:pa55word@example.com/x")
    assert out == "https://bob:[REDACTED:url_password]@example.com/x"


def test_assignment_keeps_the_key_and_quotes() -> None:
    assert redact('DB_PASSWORD="hunter22"') == 'DB_PASSWORD="[REDACTED:secret_assignment]"'
    assert redact("export FOO_TOKEN=abc123xyz") == "export FOO_TOKEN=[REDACTED:secret_assignment]"


def test_provider_token_in_assignment_is_reported_as_the_provider() -> None:
    assert redact(f"GITHUB_TOKEN={GHP}") == "GITHUB_TOKEN=[REDACTED:github_token]"


def test_private_key_block_is_removed_whole() -> None:
    out = redact(f"key:\n{PEM}\ndone")
    assert out == "key:\n[REDACTED:private_key]\ndone"


def test_hits_are_sorted_and_disjoint() -> None:
    text = " ".join(t for _, t, _ in SECRETS)
    hits = find_secrets(text)
    assert all(isinstance(h, SecretHit) for h in hits)
    assert all(a.end <= b.start for a, b in zip(hits, hits[1:], strict=False))
    assert all(secret not in redact(text) for _, _, secret in SECRETS)


@pytest.mark.timeout(120)  # a guard against catastrophic backtracking (a hang), not a speed target
def test_redacting_large_text_without_secrets_returns_it_unchanged() -> None:
    blob = ("abc_def.ghi-jkl/" * 8_000) + ("x" * 100_000) + " password policy " * 2_000
    assert redact(blob) == blob


def test_module_is_pure() -> None:
    tree = ast.parse(Path(redact_module.__file__).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"re", "typing", "__future__"}


_FRAGMENTS = st.sampled_from(
    [t for _, t, _ in SECRETS]
    + BENIGN
    + ["password=", "token: ", "=", ":", '"', "'", "@", "://", "Bearer ", "[REDACTED:", "]",
       "[REDACTED:jwt]", "\n", " ", "api_key", "-----BEGIN RSA PRIVATE KEY-----", "eyJ"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=20)), max_size=12).map("".join))
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert find_secrets(once) == []


def test_long_tokens_after_a_secret_word_in_prose_are_redacted_but_shas_in_prose_stay() -> None:
    from engine.redact import redact

    leaked = "Its API key is 8eb160ac7f4e37441cc47b4d020c672f, keep it safe."
    assert "8eb160ac7f4e37441cc47b4d020c672f" not in redact(leaked) and "keep it safe" in redact(leaked)
    assert "228011b2f80e6a6e07f78b3d8e3588d5" not in redact("set the Twilio token to 228011b2f80e6a6e07f78b3d8e3588d5")
    sha = "commit 3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376 fixed the flaky build"
    assert redact(sha) == sha  # positive control: no secret word, nothing redacted
