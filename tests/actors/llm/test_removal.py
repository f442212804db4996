"""The learned removal classifier (actors/llm/removal.py), its shipped weights, and its use by the extractor."""

from __future__ import annotations

import pytest

from actors.llm import removal
from actors.llm.rules_extract import extract_unit
from engine.models import Unit
from eval.removals import measure
from eval.removals import train as trainer

# Written for this test by the lead, not taken from the training corpus or the held-out messages.
GONE = [
    ("user", "fyi we ripped `statsd-exporter` out of the cluster on monday", "`statsd-exporter`"),
    ("assistant", "Deleted `scripts/seed_demo.py` and its Make target.", "`scripts/seed_demo.py`"),
    ("user", "Bugsnag is history, errors go to GlitchTip now", "Bugsnag"),
    ("assistant", "The `LEGACY_SSO_URL` variable is no longer read anywhere, so I removed it from the chart.",
     "`LEGACY_SSO_URL`"),
    ("user", "we moved the nightly export off Airflow, it's a plain cron job on the box now", "Airflow"),
    ("assistant", "Replaced Pillow with pyvips in the thumbnailer.", "Pillow"),
]
KEPT = [
    ("user", "should we get rid of `statsd-exporter`?", "`statsd-exporter`"),
    ("user", "let's not remove Bugsnag until the contract ends", "Bugsnag"),
    ("assistant", "Removed the retry loop around `fetch_rates`; it now fails fast.", "`fetch_rates`"),
    ("user", "we tried dropping Airflow last year but put it back after a week", "Airflow"),
    ("assistant", "Replaced Pillow with pyvips in the thumbnailer.", "pyvips"),
    ("user", "GlitchTip keeps timing out on big stack traces, annoying", "GlitchTip"),
]


def test_the_shipped_weights_are_what_the_corpus_trains() -> None:
    assert trainer.main(["--check"]) == 0


def test_training_is_deterministic_and_needs_examples() -> None:
    rows = [removal.Labelled(t, s, x, 1) for s, t, x in GONE] + [removal.Labelled(t, s, x, 0) for s, t, x in KEPT]
    assert (removal.train(rows, epochs=50) == removal.train(rows, epochs=50)).all()
    with pytest.raises(ValueError, match="at least one"):
        removal.train([])


def test_the_classifier_separates_our_own_wording() -> None:
    w, threshold = removal.load_weights()
    right = sum(removal.probability(w, t, x, s) >= threshold for s, t, x in GONE) \
        + sum(removal.probability(w, t, x, s) < threshold for s, t, x in KEPT)
    assert right >= 9, right  # 12 messages it never saw; a learned model may miss a few


def test_the_same_message_reads_the_old_thing_gone_and_the_new_one_kept() -> None:
    w, _ = removal.load_weights()
    text = "Replaced Pillow with pyvips in the thumbnailer."
    assert removal.probability(w, text, "Pillow", "assistant") > removal.probability(w, text, "pyvips", "assistant")


@pytest.mark.parametrize(("text", "things"), [
    ("Removed Redis from the stack, we use Valkey now.", ["Redis", "Valkey"]),
    ("Took out GOOGLE_TAG_ID and src/analytics/gtm.ts", ["GOOGLE_TAG_ID", "src/analytics/gtm.ts"]),
    ("the old box at ci.example.com and `legacy-auth` are gone", ["ci.example.com", "`legacy-auth`"]),
    ("Deleted node16 images; bumped to 2.4.1 on port 8080.", ["node16"]),  # numbers and versions are values
    ("The team agreed. We will see.", []),  # sentence case is no name
    ("Removed the old deps, e.g. `left-pad`, and/or the 24/7 TODO pager.", ["`left-pad`", "TODO", "pager"]),
    ("we use react-query and the server-side cache", []),  # compounds of common words are phrases
    ("Gitea Actions is gone", ["Gitea Actions", "Actions"]),  # an opening name: both readings
])
def test_named_things_are_found_by_their_form(text: str, things: list[str]) -> None:
    assert removal.named_things(text) == things


def test_the_corpus_holds_no_held_out_message() -> None:
    train = {e.text.strip().lower() for _, e in trainer.load_corpus()}
    held = [m.text for path in sorted(measure.DATA.glob("part*.jsonl")) for m in measure.load(path)]
    assert len(held) == 600 and not [t for t in held if t.strip().lower() in train]
    labels = {e.label for _, e in trainer.load_corpus()}
    assert labels == {0, 1}  # positive control: both labels, so precision and recall mean something


def test_a_corpus_line_whose_thing_is_not_in_its_text_is_named(tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"part": 1, "speaker": "user", "text": "we use Redis", "things": [{"name": "Kafka", "gone": false}]}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl line 1: the thing 'Kafka'"):
        trainer.load_corpus(bad)


def _unit(user: str = "", assistant: str = "") -> Unit:
    return Unit(id="u1", project="p", session="s", ts_ms=1, user=user, assistant=assistant, turn=1, request_id="r1")


def test_a_thing_in_capitals_or_an_abbreviation_is_never_acted_on() -> None:
    assert removal.gone("Removed the TODO comments and the PDF export.", "assistant") == []
    assert removal.gone("Removed `pdf-export`.", "assistant") == ["pdf-export"]  # positive control


def test_each_line_of_a_report_is_read_on_its_own() -> None:
    """Lines without a full stop are separate sentences to the extractor, so a later line never
    changes how an earlier one is read."""
    said = extract_unit(_unit(assistant="Done:\n- Ripped out `legacy-auth`\n- `auth-v2` handles login now"), "project:p")
    assert [c.belief for c in said if c.negated] == ["legacy-auth"]


def test_every_item_of_a_list_under_a_header_is_read() -> None:
    said = extract_unit(_unit(assistant="Removed:\n- `old_cache`\n- `old_queue`\n- `legacy_worker`"), "project:p")
    assert [c.belief for c in said if c.negated] == ["old_cache", "old_queue", "legacy_worker"]


def test_removing_a_credential_variable_retires_it() -> None:
    """A variable's name is no secret: its removal must reach the memory of where the credential is read."""
    said = extract_unit(_unit(assistant="Removed `STRIPE_SECRET_KEY` from the settings."), "project:p")
    assert [c.belief for c in said if c.negated] == ["stripe_secret_key"]


@pytest.mark.parametrize("value", ["AKIAIOSFODNN7EXAMPLE", "postgres://admin:S3cret@db.internal:5432/app",
                                   "https://hooks.example.com/services/T0A1B2C3/B4D5E6F7/xY9zQ8wV7uT6sR5q"])
def test_a_secret_shaped_value_is_never_stored_as_a_removal(value: str) -> None:
    said = extract_unit(_unit(assistant=f"Removed the hard-coded `{value}` from settings.py."), "project:p")
    assert not [c for c in said if value.lower() in c.text.lower() or value.lower() in c.belief]


def test_a_secret_shaped_token_is_never_stored_as_a_removal() -> None:
    said = extract_unit(_unit(assistant="Removed the hard-coded key `sk_live_51Habc123XYZ987qwe` from config.py."), "project:p")
    assert not [c for c in said if "sk_live" in c.text or "sk_live" in c.belief]
    control = extract_unit(_unit(assistant="Removed the hard-coded `stripe-mock` from config.py."), "project:p")
    assert [c.belief for c in control if c.negated] == ["stripe-mock"]  # positive control


def test_the_extractor_retires_what_a_statement_says_is_gone_and_not_what_a_question_asks() -> None:
    said = extract_unit(_unit(user="we ripped `statsd-exporter` out of the cluster"), "project:p")
    assert [(c.negated, c.belief) for c in said if c.negated] == [(True, "statsd-exporter")]
    asked = extract_unit(_unit(user="should we get rid of `statsd-exporter`?"), "project:p")
    assert not [c for c in asked if c.negated]


def test_one_removal_a_turn_however_many_readings_find_it() -> None:
    said = extract_unit(_unit(assistant="Removed `sentry-sdk`. `sentry-sdk` is no longer used by the app."), "project:p")
    assert len([c for c in said if c.negated and c.belief == "sentry-sdk"]) == 1


def test_a_plain_word_is_never_read_as_gone_however_sure_the_model_is() -> None:
    """A plain word is also a language, a team or a part of the product, and retiring it retires every
    memory that mentions it: only names of a distinctive form are acted on."""
    w, threshold = removal.load_weights()
    text = "Bugsnag is history, we dropped it in march."
    assert removal.probability(w, text, "Bugsnag", "user") >= threshold  # positive control: the model reads it
    assert removal.gone(text, "user") == []
    assert removal.gone("`bugsnag-js` is history, we dropped it in march.", "user") == ["bugsnag-js"]


def test_a_plain_name_read_as_gone_is_returned_only_when_asked_for() -> None:
    text = "Bugsnag is history, we dropped it in march."
    assert removal.gone(text, "user", plain=True) == ["Bugsnag"]
    assert removal.gone("`bugsnag-js` is history, we dropped it in march.", "user", plain=True) == []


def test_a_plain_name_gone_retires_only_the_store_of_what_the_message_names() -> None:
    """"Quarrystore is out for the thumbnails": the memory of where thumbnails are kept goes; a plain name read
    as gone with nothing named after it retires nothing (every memory that mentions it would go)."""
    said = extract_unit(_unit(user="Quarrystore is out for the thumbnails, we pulled it last sprint"), "project:p")
    assert [(c.key, c.belief) for c in said if c.negated] == [("thumbnail storage", "quarrystore")]
    bare = extract_unit(_unit(user="Quarrystore is history, we pulled it last sprint"), "project:p")
    assert removal.gone("Quarrystore is history, we pulled it last sprint.", "user", plain=True) == ["Quarrystore"]
    assert not [c for c in bare if c.negated and c.key]  # read as gone, yet no stored thing named: no store retired
