"""Source of ``eval/peers/heldout.json``: held-out scenarios in the opencode-memory format.

Written for dynamics-memory by someone who had not read the extractor, the engine or the
retrieval code; new domains, people, tools and wordings (nothing copied from dev.json).
``python -m eval.peers.build_heldout`` rewrites the JSON; the file is the artefact that
``dynmem bench peers --file eval/peers/heldout.json`` scores.

Each memory gets the raw fields it sets plus the ``effective`` block that upstream's
``bench/lib.ts buildStore()`` would apply (category ``other``, weight 2, scope ``global``,
status ``ACTIVE``, tier ``core`` iff the category is preferences/workflow/decisions/environment).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("heldout.json")
CORE_CATEGORIES = {"preferences", "workflow", "decisions", "environment"}

SECTIONS = {
    "keyword": "keyword: exact overlap",
    "paraphrase": "paraphrase: same meaning, different wording",
    "cross": "it-en / en-it cross-language",
    "synonym": "synonym: bilingual synonym groups",
    "distractor": "distractors: noise must not win",
    "isolation": "isolation: project scope answers in its own project",
    "contradiction": "contradiction: newer fact must win",
    "obsolete": "obsolete: stale memories rank low",
    "duplicate": "duplicate: canonical entry wins",
    "multi": "multi-expected: two facts should both surface",
    "superseded": "superseded: tombstones never resurface",
    "conflicted": "conflicted: flagged entries stay visible but never outrank the fix",
    "feedback": "usage feedback: helpful/irrelevant modulate ranking",
    "core": "core preferences always available",
    "hard-negative": "hard negatives: strong lexical collision, different meaning",
    "none": "none: clean no-match",
    "semantic-distractor": "semantic distractors: adjacent topic, does not answer",
    "other-person": "other-person negatives: a colleague's or relative's fact does not answer for the user",
    "xl-negative": "cross-language negatives",
    "isolation-negative": "project-isolation negatives",
    "core-only": "core-only: nothing relevant; only the contractual core slot may show",
}


def M(text: str, category: str = "status", **raw: Any) -> dict[str, Any]:  # noqa: N802
    """A memory as written in a scenario: its text, category and any raw upstream field."""
    return {"text": text, "category": category, **raw}


def _memory(i: int, m: dict[str, Any]) -> dict[str, Any]:
    raw = {k: v for k, v in m.items() if k != "text"}
    cat = raw.get("category", "other")
    eff = {"category": cat, "tier": "core" if cat in CORE_CATEGORIES else "archival",
           "weight": raw.get("weight", 2), "scope": raw.get("scope", "global"), "projectID": raw.get("projectID"),
           "status": raw.get("status", "ACTIVE"), "lastSeenAgoDays": raw.get("lastSeenAgoDays", 0),
           "source": "dreamed", "sensitivity": "normal", "pinned": raw.get("pinned"),
           "helpfulCount": raw.get("helpful"), "irrelevantCount": raw.get("irrelevant")}
    return {"id": f"m{i}", "text": m["text"], **raw, "effective": eff}


# (group, tags, memories, query, expected indices or None, directory)
P = "positive"
ROWS: list[tuple[str, list[str], list[dict[str, Any]], str, list[int] | None, str | None]] = [
    # ---- keyword: exact overlap ----------------------------------------------------------------
    ("keyword", ["keyword"], [M("The user's login shell is fish.", "preferences")],
     "what shell does the user use?", [0], None),
    ("keyword", ["keyword"], [M("Prefers Helix as the text editor; modal keys, no plugins.", "preferences")],
     "which text editor does the user prefer?", [0], None),
    ("keyword", ["keyword"], [M("The user keeps bees: two hives on the roof of their apartment building.")],
     "how many hives does the user keep?", [0], None),
    ("keyword", ["keyword"], [M("User's home lab runs Proxmox on three mini PCs.")],
     "what does the user's home lab run on?", [0], None),
    ("keyword", ["keyword"], [M("Deploys personal side projects to Fly.io.")],
     "which platform hosts the user's side projects?", [0], None),
    ("keyword", ["keyword"], [M("The user practices Japanese on Duolingo every morning before work.")],
     "what language is the user practicing?", [0], None),
    ("keyword", ["keyword"], [M("Favourite board game: Terraforming Mars.", "preferences")],
     "what's the user's favourite board game?", [0], None),
    ("keyword", ["keyword"], [M("The user writes commit messages in the Conventional Commits format.", "workflow")],
     "what format does the user use for commit messages?", [0], None),
    ("keyword", ["keyword"], [M("Uses Colemak as keyboard layout on every machine.", "preferences")],
     "which keyboard layout does the user type on?", [0], None),
    ("keyword", ["keyword"], [M("The user's sourdough starter is named Clint and lives in the fridge.")],
     "what is the name of the user's sourdough starter?", [0], None),
    # ---- paraphrase ----------------------------------------------------------------------------
    ("paraphrase", ["paraphrase"], [M("Rides a road bike about 200 km each week.")],
     "how far does the user cycle weekly?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Peanuts give the user an allergic reaction.")],
     "are there any foods the user can't eat?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Would rather get one thorough code review at the end than many tiny ones along the way.",
                                      "preferences")],
     "how does the user like pull request feedback batched?", [0], None),
    ("paraphrase", ["paraphrase"], [M("The user's daughter starts primary school in September.")],
     "when does the user's kid begin school?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Hates chat pings during focus blocks; reads notifications only at noon and 5pm.",
                                      "preferences")],
     "when does the user check their messages?", [0], None),
    ("paraphrase", ["paraphrase"], [M("The user moved from Lisbon to Rotterdam last spring.")],
     "which city is the user based in now?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Dislikes ORMs; writes raw SQL with sqlc for the Go services.", "preferences")],
     "how does the user prefer to talk to the database from Go?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Works at a standing desk with a walking pad underneath.")],
     "does the user sit while working?", [0], None),
    ("paraphrase", ["paraphrase"], [M("Keeps a Zettelkasten in Obsidian for reading notes.")],
     "where does the user store what they learn from books?", [0], None),
    ("paraphrase", ["paraphrase"], [M("The user's laptop is a ThinkPad X1 Carbon running NixOS.")],
     "what computer and operating system is the user on?", [0], None),
    # ---- cross-language ------------------------------------------------------------------------
    ("cross", ["it-en"], [M("L'utente usa Zed come editor principale.", "preferences")],
     "what is the user's main editor?", [0], None),
    ("cross", ["it-en"], [M("L'utente va in barca a vela ogni fine settimana sul lago di Garda.")],
     "what does the user do on weekends?", [0], None),
    ("cross", ["it-en"], [M("L'utente preferisce i test di integrazione ai mock.", "preferences")],
     "does the user like mocking in tests?", [0], None),
    ("cross", ["it-en"], [M("L'utente ha un gatto che si chiama Ragù.")],
     "does the user have a cat?", [0], None),
    ("cross", ["it-en"], [M("L'utente lavora da remoto da Bologna.")],
     "where does the user work from?", [0], None),
    ("cross", ["it-en"], [M("L'utente scrive i backend in Elixir con Phoenix.", "preferences")],
     "which backend framework does the user use?", [0], None),
    ("cross", ["en-it"], [M("The user climbs at the bouldering gym on Tuesdays and Thursdays.")],
     "quando va ad arrampicare l'utente?", [0], None),
    ("cross", ["en-it"], [M("Prefers tabs over spaces, width 4.", "preferences")],
     "l'utente preferisce tab o spazi?", [0], None),
    ("cross", ["en-it"], [M("The user drinks only decaf after 2pm.", "preferences")],
     "l'utente beve caffè nel pomeriggio?", [0], None),
    ("cross", ["en-it"], [M("The user's backups go to a Hetzner storage box via restic.")],
     "dove salva i backup l'utente?", [0], None),
    # ---- synonym (bilingual) -------------------------------------------------------------------
    ("synonym", ["synonym"], [M("The user's favourite fruit is the fig.", "preferences")],
     "qual è il frutto preferito dell'utente?", [0], None),
    ("synonym", ["synonym"], [M("L'utente fa il turno di notte il venerdì.")],
     "which shift does the user work on Fridays?", [0], None),
    ("synonym", ["synonym"], [M("The user's car is an old Fiat Panda.")],
     "che automobile ha l'utente?", [0], None),
    ("synonym", ["synonym"], [M("L'utente odia le riunioni del lunedì mattina.", "preferences")],
     "does the user mind monday morning meetings?", [0], None),
    ("synonym", ["synonym"], [M("The user grows tomatoes and basil on the balcony.")],
     "cosa coltiva l'utente sul balcone?", [0], None),
    ("synonym", ["synonym"], [M("L'utente ascolta jazz mentre programma.", "preferences")],
     "what music does the user listen to while coding?", [0], None),
    ("synonym", ["synonym"], [M("For holidays the user heads to the Dolomites to hike.", "preferences")],
     "dove va in vacanza l'utente?", [0], None),
    ("synonym", ["synonym"], [M("L'utente usa sempre il tema scuro.", "preferences")],
     "does the user like dark themes?", [0], None),
    # ---- distractors ---------------------------------------------------------------------------
    ("distractor", ["distractor"], [M("The user writes firmware in Zig for a hobby synthesizer."),
                                    M("The user's synthesizer collection includes a Korg Minilogue."),
                                    M("The user's mother sews zig-zag quilts.")],
     "what language does the user use for firmware?", [0], None),
    ("distractor", ["distractor"], [M("The user bakes rye bread every Sunday."),
                                    M("The user's electronics breadboards are stored in the garage.")],
     "what does the user bake at the weekend?", [0], None),
    ("distractor", ["distractor"], [M("Hosts the family photo archive on a Synology NAS."),
                                    M("The user photographs birds with a 400mm lens."),
                                    M("The NAS fan was replaced in March.")],
     "where are the family pictures stored?", [0], None),
    ("distractor", ["distractor"], [M("The user's Python services use Litestar for HTTP APIs.", "preferences"),
                                    M("Monty, the user's ball python, lives in a terrarium."),
                                    M("The user read a book on API design last year.")],
     "which web framework does the user use for python services?", [0], None),
    ("distractor", ["distractor"], [M("The user runs a 5k every Saturday at the local parkrun."),
                                    M("The user's CI runs take about 5 minutes."),
                                    M("The user runs Arch Linux on the desktop.")],
     "what does the user do for exercise?", [0], None),
    ("distractor", ["distractor"], [M("Uses Jujutsu (jj) instead of git for local version control.", "preferences"),
                                    M("The user trains Brazilian jiu-jitsu twice a week."),
                                    M("The user's dotfiles repo has a dozen shell aliases.")],
     "what does the user reach for as a VCS on their own machine?", [0], None),
    ("distractor", ["distractor"], [M("The user takes the 7:40 train to the office."),
                                    M("The user trains a small language model for fun."),
                                    M("Office plants are watered by the user on Mondays.")],
     "how does the user get into the office?", [0], None),
    ("distractor", ["distractor"], [M("For prototypes the user reaches for SQLite with Litestream.", "preferences"),
                                    M("The user plays the board game Go at a club."),
                                    M("The user prototyped a drone in college.")],
     "what database does the user pick when prototyping?", [0], None),
    ("distractor", ["distractor"], [M("Tea, not coffee: the user drinks green tea all day.", "preferences"),
                                    M("The user's team chat channel is called Coffee Club."),
                                    M("The user bought a new kettle.")],
     "what's in the user's mug most of the day?", [0], None),
    ("distractor", ["distractor"], [M("The user monitors production with Grafana and Loki."),
                                    M("The user monitors the bird feeder with a camera."),
                                    M("The user's production of homemade cider is 20 litres a year.")],
     "what does the user use for observability of prod services?", [0], None),
    # ---- isolation -----------------------------------------------------------------------------
    ("isolation", ["isolation"], [M("This project deploys with Kamal to two Hetzner boxes.", "project", scope="project",
                                    projectID="/srv/atelier"),
                                  M("This project deploys to Render via a blueprint file.", "project", scope="project",
                                    projectID="/srv/ledger")],
     "how is this project deployed?", [0], "/srv/atelier"),
    ("isolation", ["isolation"], [M("The quill repo formats Rust with rustfmt nightly and a custom rustfmt.toml.", "project",
                                    scope="project", projectID="/code/quill"),
                                  M("harp sticks to the stable rustfmt defaults.", "project", scope="project",
                                    projectID="/code/harp"),
                                  M("The user likes consistent formatting.", "preferences")],
     "how is formatting configured in this repo?", [0], "/code/quill"),
    ("isolation", ["isolation"], [M("Orbit keeps its configuration in TOML files under config/.", "project", scope="project",
                                    projectID="/work/orbit"),
                                  M("Comet reads YAML config from environment-specific files.", "project", scope="project",
                                    projectID="/work/comet")],
     "what config format does this project use?", [0], "/work/orbit"),
    ("isolation", ["isolation"], [M("Tests in this repo need a running Mosquitto MQTT broker.", "project", scope="project",
                                    projectID="/home/dev/birdsong"),
                                  M("Tests here need a local Postgres with the pgvector extension.", "project",
                                    scope="project", projectID="/home/dev/trellis")],
     "what do the tests here depend on?", [0], "/home/dev/birdsong"),
    ("isolation", ["isolation"], [M("Kiln targets Python 3.12 and is managed with uv.", "project", scope="project",
                                    projectID="/p/kiln"),
                                  M("Loom is pinned to Python 3.9 for a legacy client.", "project", scope="project",
                                    projectID="/p/loom")],
     "which python version does this project need?", [0], "/p/kiln"),
    # ---- contradiction: newer wins -------------------------------------------------------------
    ("contradiction", ["contradiction"], [M("The user's main editor is VS Code.", "preferences", weight=3, lastSeenAgoDays=60),
                                          M("The user switched to Zed as their main editor.", "preferences", weight=3,
                                            lastSeenAgoDays=2)],
     "what editor does the user work in?", [1], None),
    ("contradiction", ["contradiction"], [M("Home for the user is a flat in Utrecht.", lastSeenAgoDays=200),
                                          M("Moved to Ghent over the summer.", lastSeenAgoDays=5)],
     "what city is the user living in at the moment?", [1], None),
    ("contradiction", ["contradiction"], [M("Uses Heroku for hobby deployments.", weight=3, lastSeenAgoDays=120),
                                          M("Now deploys hobby apps on Railway instead of Heroku.", weight=3,
                                            lastSeenAgoDays=3)],
     "where does the user host hobby apps?", [1], None),
    ("contradiction", ["contradiction"], [M("The user's team ships releases on Thursdays.", lastSeenAgoDays=90),
                                          M("Release day for the user's team moved to Tuesday.", lastSeenAgoDays=1)],
     "which day does the user's team release?", [1], None),
    ("contradiction", ["contradiction"], [M("Prefers Poetry for Python packaging.", "preferences", weight=3,
                                            lastSeenAgoDays=150),
                                          M("Dropped Poetry; packages Python projects with Hatch now.", "preferences",
                                            weight=3, lastSeenAgoDays=4)],
     "what does the user package python projects with?", [1], None),
    # ---- obsolete ------------------------------------------------------------------------------
    ("obsolete", ["obsolete"], [M("The user's first job was at a call center.", weight=0.5, lastSeenAgoDays=1500),
                                M("The user is a staff engineer at a logistics startup.", lastSeenAgoDays=3)],
     "what role does the user have at work?", [1], None),
    ("obsolete", ["obsolete"], [M("The user's old camera was a Canon AE-1.", weight=0.5, lastSeenAgoDays=1200),
                                M("The user shoots with a Fujifilm X-T5.", lastSeenAgoDays=1)],
     "what camera does the user shoot with?", [1], None),
    ("obsolete", ["obsolete"], [M("The user studied for an AWS associate exam.", weight=0.5, lastSeenAgoDays=1800),
                                M("The user is preparing for the CKA Kubernetes certification.", lastSeenAgoDays=2)],
     "what certification is the user working toward?", [1], None),
    ("obsolete", ["obsolete"], [M("The user played drums in a school band in Leeds.", weight=0.5, lastSeenAgoDays=2500),
                                M("The user plays bass in a covers band that rehearses on Wednesdays.",
                                  lastSeenAgoDays=6)],
     "what instrument does the user play these days?", [1], None),
    # ---- duplicate -----------------------------------------------------------------------------
    ("duplicate", ["duplicate"], [M("The user wants squash merges on every repository.", "workflow", weight=3),
                                  M("Squash-merge PRs, says the user.", "workflow", weight=1)],
     "how should PRs be merged?", [0], None),
    ("duplicate", ["duplicate"], [M("The user's timezone is America/Denver.", weight=3),
                                  M("User is on Mountain Time.", weight=1)],
     "what timezone is the user in?", [0], None),
    ("duplicate", ["duplicate"], [M("Review comments should be phrased as suggestions, not commands.", "preferences",
                                    weight=3),
                                  M("The user likes review comments worded as suggestions.", "preferences", weight=1)],
     "how does the user want review comments worded?", [0], None),
    # ---- multi-expected ------------------------------------------------------------------------
    ("multi", ["keyword", "multi-expected"], [M("The user's shell is Nushell.", "preferences"),
                                              M("The user's terminal emulator is WezTerm.", "preferences")],
     "which shell and terminal emulator does the user run?", [0, 1], None),
    ("multi", ["paraphrase", "multi-expected"], [M("Front-end work is done in SvelteKit.", "preferences"),
                                                 M("Styling goes through UnoCSS.", "preferences"),
                                                 M("The user's favourite museum is the Rijksmuseum.")],
     "what framework and CSS tooling does the user use for the front end?", [0, 1], None),
    ("multi", ["paraphrase", "multi-expected"], [M("The user is vegetarian."),
                                                 M("The user cannot eat gluten."),
                                                 M("The user likes Thai restaurants.", "preferences")],
     "any dietary restrictions I should know about for the user?", [0, 1], None),
    ("multi", ["keyword", "multi-expected"], [M("Infrastructure is written in Pulumi with TypeScript.", "decisions"),
                                              M("Secrets live in 1Password and are injected with op run.", "decisions")],
     "how does the user manage infrastructure code and secrets?", [0, 1], None),
    ("multi", ["paraphrase", "multi-expected"], [M("The user's working hours are 8 to 4 Central European Time."),
                                                 M("No work on Wednesday afternoons: the user does childcare then.")],
     "when is the user available for meetings?", [0, 1], None),
    ("multi", ["keyword", "multi-expected"], [M("The user reads on a Kobo e-reader."),
                                              M("Currently reading 'The Left Hand of Darkness'."),
                                              M("The user's brother writes crime novels.")],
     "what is the user reading and on what device?", [0, 1], None),
    # ---- superseded ----------------------------------------------------------------------------
    ("superseded", ["superseded"], [M("Default cloud region is eu-central-1 now.", "environment", lastSeenAgoDays=1),
                                    M("Default cloud region is us-east-1.", "environment", status="SUPERSEDED")],
     "which cloud region does the user deploy to by default?", [0], None),
    ("superseded", ["superseded"], [M("The user is on call one week in four.", lastSeenAgoDays=2),
                                    M("The user is on call every other week.", status="SUPERSEDED")],
     "how often is the user on call?", [0], None),
    # ---- conflicted ----------------------------------------------------------------------------
    ("conflicted", ["contradiction"], [M("Since March the user formats Python with ruff format.", "preferences", weight=3,
                                         lastSeenAgoDays=2),
                                       M("The user formats Python with yapf.", "preferences", weight=3,
                                         lastSeenAgoDays=60, status="CONFLICTED")],
     "what formatter does the user use for Python?", [0], None),
    # ---- usage feedback ------------------------------------------------------------------------
    ("feedback", ["feedback"], [M("The user prefers Kagi for web search.", "preferences", helpful=3),
                                M("The user's sister works at a search engine company.", irrelevant=4)],
     "which search engine does the user use?", [0], None),
    ("feedback", ["feedback"], [M("The user likes concise answers with the code first.", "preferences", helpful=2),
                                M("The user once asked for a long explanation of monads.", irrelevant=2)],
     "how long should answers to the user be?", [0], None),
    # ---- core preferences always available -----------------------------------------------------
    ("core", ["keyword"], [M("The user's favourite film is Spirited Away."),
                           M("The user prefers watching films in the original language with subtitles.", "preferences")],
     "what is the user's favourite film?", [0], None),
    # ==== negatives ==============================================================================
    # hard negatives / near-misses: a strong word collision, a different meaning
    ("hard-negative", ["hard-negative"], [M("The user keeps a container garden of herbs on the windowsill.")],
     "which container runtime does the user use?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user pruned the lower branches of the apple tree.")],
     "which git branch does the user usually work on?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user's village is getting a new gas pipeline.")],
     "what does the user's CI pipeline look like?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user collects beetles and other bugs for a natural history museum.")],
     "which bug tracker does the user prefer?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user buys single-origin coffee beans from Java.", "preferences")],
     "which Java version does the user target?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user bakes oatmeal cookies for the team on Fridays.")],
     "how does the user's web app handle cookie consent?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user plants tulip bulbs every spring.")],
     "does the user build services with Spring Boot?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user collects sea shells on beaches in Brittany.")],
     "what shell does the user write scripts in?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user pops corn kernels in olive oil for movie nights.")],
     "which kernel version does the user's server run?", None, None),
    ("hard-negative", ["hard-negative"], [M("The user enjoys a glass of port after dinner.", "preferences")],
     "which port does the user's dev server listen on?", None, None),
    # clean no-match: unrelated
    ("none", ["none"], [M("The user prefers Fastmail for email.", "preferences")],
     "does the user have a sailing license?", None, None),
    ("none", ["none"], [M("The user writes Go at work.")],
     "what's the user's favourite pizza topping?", None, None),
    ("none", ["none"], [M("The user's monitor is a 27-inch 4K panel.")],
     "has the user ever visited Japan?", None, None),
    ("none", ["none"], [M("The user bookmarks articles to read later in Pocket."),
                        M("Light-roast pour-over is the user's morning ritual.", "preferences")],
     "does the user speak Portuguese?", None, None),
    ("none", ["none"], [M("The user's GitHub handle is @tarnwell.")],
     "how tall is the user?", None, None),
    ("none", ["none"], [M("Uses Todoist for personal tasks.", "preferences")],
     "what is the user's blood type?", None, None),
    ("none", ["none"], [M("The user runs Home Assistant on a Raspberry Pi.")],
     "which football team does the user support?", None, None),
    ("none", ["none"], [M("The user keeps dotfiles in a bare git repository.", "workflow")],
     "did the user grow up in the countryside?", None, None),
    # on topic, but does not answer
    ("semantic-distractor", ["semantic-distractor"], [M("The user wants to learn to sail someday.")],
     "what boat does the user own?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user read a blog post comparing Postgres and MySQL.")],
     "which database does the user run in production?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user asked how Kotlin coroutines differ from Scala futures.")],
     "what language does the user write Android apps in?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user is thinking about buying a standing desk.")],
     "what desk does the user work at?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user's laptop battery drains fast when compiling.")],
     "what laptop model does the user have?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user finds YAML indentation errors annoying.",
                                                        "preferences")],
     "which CI provider does the user use?", None, None),
    ("semantic-distractor", ["semantic-distractor"], [M("The user attended a FOSDEM talk about vector databases.")],
     "which vector database does the user's project use?", None, None),
    # somebody else's fact, asked about the user (several phrasings)
    ("other-person", ["other-person"], [M("The user's wife is a paediatric nurse.")],
     "what's the user's profession?", None, None),
    ("other-person", ["other-person"], [M("Colleague Henrike uses Emacs with Evil mode.")],
     "which editor do I use?", None, None),
    ("other-person", ["other-person"], [M("The user's teammate Kenji insists on tabs.")],
     "does the user prefer tabs or spaces?", None, None),
    ("other-person", ["other-person"], [M("The user's father is retired and lives in Porto.")],
     "which town does the user call home?", None, None),
    ("other-person", ["other-person"], [M("Their manager, Ruth, is vegan.")],
     "is the user vegan?", None, None),
    ("other-person", ["other-person"], [M("The user's son is learning Scratch at school.")],
     "what programming language am I learning?", None, None),
    ("other-person", ["other-person"], [M("Nilufar from the platform team drives an electric Kia.")],
     "what car do I drive?", None, None),
    # cross-language negatives
    ("xl-negative", ["xl-negative"], [M("The user prefers Kakoune key bindings.", "preferences")],
     "l'utente ha figli?", None, None),
    ("xl-negative", ["xl-negative"], [M("L'utente usa Firefox come browser.", "preferences")],
     "what sport does the user follow?", None, None),
    ("xl-negative", ["xl-negative"], [M("The user's cat is called Miso.")],
     "qual è il linguaggio preferito dell'utente per il backend?", None, None),
    # project isolation negatives
    ("isolation-negative", ["isolation-negative"], [M("This project uses Celery with RabbitMQ for background tasks.",
                                                      "project", scope="project", projectID="/srv/ledger")],
     "what task queue does this project use?", None, "/srv/atelier"),
    ("isolation-negative", ["isolation-negative"], [M("harp publishes its docs to Read the Docs.", "project",
                                                      scope="project", projectID="/code/harp")],
     "where are this repo's docs published?", None, "/code/quill"),
    ("isolation-negative", ["isolation", "isolation-negative"], [
        M("Comet's staging URL is comet-stg.example.net.", "project", scope="project", projectID="/work/comet"),
        M("Keep replies short, the user says.", "preferences")],
     "what is the staging URL for this project?", None, "/work/orbit"),
    # core only: a task with nothing relevant
    ("core-only", ["core-only"], [M("The user prefers British spelling in docs.", "preferences")],
     "make the retry helper back off exponentially with jitter", None, None),
    ("core-only", ["core-only"], [M("The user wants type hints on all public functions.", "preferences"),
                                  M("The user turns on high-contrast themes everywhere.", "preferences")],
     "rename the orders table to purchase_orders and update the migrations", None, None),
    ("core-only", ["core-only"], [M("The user prefers small, focused commits.", "workflow")],
     "why is the websocket reconnect loop spinning at 100% CPU?", None, None),
]


def build() -> dict[str, Any]:
    scenarios = []
    for i, (group, tags, mems, query, expected, directory) in enumerate(ROWS, start=1):
        negative = expected is None
        scenarios.append({
            "id": f"ho-{i:03d}", "set": "heldout", "tags": tags, "section": SECTIONS[group],
            "memories": [_memory(j, m) for j, m in enumerate(mems)], "query": query, "directory": directory,
            "expected": "none" if negative else [f"m{j}" for j in expected],  # type: ignore[union-attr]
            "expected_indices": [] if negative else list(expected),  # type: ignore[arg-type]
            "polarity": "negative" if negative else "positive",
            "negative_category": group if negative else None,
        })
    n_neg = sum(s["polarity"] == "negative" for s in scenarios)
    meta = {
        "source": "written for dynamics-memory without reading the code",
        "format": "the opencode-memory scenario format of ../shared/peers/opencode-memory/dev.json",
        "set": "heldout",
        "count": len(scenarios),
        "positives": len(scenarios) - n_neg,
        "negatives": n_neg,
        "memory_ids": "m<index> = position in the scenario's memories list (as bench/lib.ts buildStore assigns)",
        "effective_fields": "defaults applied by bench/lib.ts buildStore(): category 'other', weight 2, scope 'global', "
                            "status 'ACTIVE', lastSeen = now - lastSeenAgoDays days, source 'dreamed', sensitivity "
                            "'normal', tier 'core' iff category in {preferences, workflow, decisions, environment} "
                            "else 'archival'",
        "scoring": "positive: expected memories should rank top-5 (Recall@5/MRR) and pass the relevance gate; negative "
                   "('none'): relevance tier must surface nothing (core-slot entries are not counted)",
        "generator": "eval/peers/build_heldout.py",
    }
    return {"meta": meta, "scenarios": scenarios}


def main() -> None:
    OUT.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
