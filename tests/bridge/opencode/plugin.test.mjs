// Unit tests of the opencode plugin against a tiny fake sidecar. Run: node --test tests/bridge/opencode/
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { fileURLToPath } from "node:url";

import DefaultExport, { DynmemPlugin } from "../../../bridge/opencode/dynmem.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = "t0ken";

/** A fake `dynmem serve`: records requests; `routes["POST /v1/recall"] = (body, req) => [status, json]`. */
async function fakeSidecar(home, routes = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      const url = new URL(req.url, "http://x");
      const body = raw ? JSON.parse(raw) : null;
      const key = `${req.method} ${url.pathname}`;
      requests.push({ key, url: req.url, headers: req.headers, body });
      const reply = (status, obj) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(obj));
      };
      if (key === "GET /v1/health") return reply(200, { ok: true, version: "fake" });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return reply(401, { error: "bad token", code: "unauthorized" });
      const route = routes[key] || routes[`${req.method} *`];
      if (route) {
        const [status, obj] = await route(body, req);
        return reply(status, obj);
      }
      if (key === "POST /v1/recall") {
        return reply(200, { retrieval_id: "r1", abstained: false, context: "<memory>the API listens on port 9090</memory>",
          memories: [{ id: "m1", text: "The API listens on port 9090.", score: 0.91, state: "active", scope: "project", kind: "fact" }],
          conflicts: [] });
      }
      if (key === "POST /v1/observe") return reply(200, { unit_id: `u-${requests.length}`, turn: 1, created: true });
      return reply(200, { ok: true });
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  const writeInfo = () => {
    fs.writeFileSync(path.join(home, "token"), TOKEN, { mode: 0o600 });
    fs.writeFileSync(path.join(home, "sidecar.json"), JSON.stringify({ url, pid: process.pid, token_file: path.join(home, "token") }));
  };
  writeInfo();
  const sent = (key) => requests.filter((r) => r.key === key);
  return { url, requests, sent, writeInfo, close: () => new Promise((r) => server.close(r)) };
}

const USER_MSG = { info: { id: "msg_u1", role: "user", sessionID: "ses_1" }, parts: [{ type: "text", text: "the API listens on port 9090" }] };
const ASSISTANT_MSG = {
  info: { id: "msg_a1", role: "assistant", sessionID: "ses_1", parentID: "msg_u1", time: { created: 1700000000000, completed: 1700000001000 } },
  parts: [{ type: "step-start" }, { type: "text", text: "Noted: port 9090." }],
};

function fakeClient(messages = [USER_MSG, ASSISTANT_MSG]) {
  return { session: { messages: async ({ path: p }) => ({ data: p.id === "ses_1" ? messages : [] }) } };
}

let home;
let project;
const savedEnv = { ...process.env };

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "dynmem-plugin-"));
  project = fs.mkdtempSync(path.join(os.tmpdir(), "dynmem-project-"));
  process.env.DYNMEM_HOME = home;
  process.env.DYNMEM_STATE_DIR = path.join(home, "state"); // never the user's running sidecar
  process.env.DYNMEM_AUTOSTART = "0";
  delete process.env.DYNMEM_BIN;
});

afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(project, { recursive: true, force: true });
});

async function load(client = fakeClient()) {
  const hooks = await DynmemPlugin({ client, directory: project, worktree: "/" });
  return hooks;
}

function outboxLines() {
  const dir = path.join(home, "outbox");
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith(".jsonl")).flatMap((f) =>
    fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)));
}

function pendingOutbox() {
  const lines = outboxLines();
  const acks = new Set(lines.filter((l) => l.ack).map((l) => l.ack));
  return lines.filter((l) => l.id && !acks.has(l.id));
}

async function say(hooks, text, sessionID = "ses_1") {
  await hooks["chat.message"]({ sessionID }, { message: { id: "msg_u1", role: "user" }, parts: [{ type: "text", text }] });
}

async function settle(hooks) {
  await hooks.dispose();
}

test("exports the plugin as default and named export", () => {
  assert.equal(DefaultExport, DynmemPlugin);
  assert.equal(typeof DynmemPlugin, "function");
});

test("a second call with the same input (default + named export) registers nothing twice", async () => {
  const sc = await fakeSidecar(home);
  try {
    const input = { client: fakeClient(), directory: project, worktree: "/" };
    const first = await DynmemPlugin(input);
    const second = await DefaultExport(input);
    assert.ok(first.tool && first["experimental.chat.system.transform"]);
    assert.deepEqual(second, {});
    await first.dispose();
  } finally {
    await sc.close();
  }
});

test("injects the recalled context into the system prompt with the user's text as query", async () => {
  const sc = await fakeSidecar(home);
  try {
    const hooks = await load();
    await say(hooks, "which port does the API use?");
    const output = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.deepEqual(output.system, ["You are opencode.", "<memory>the API listens on port 9090</memory>"]);
    const [recall] = sc.sent("POST /v1/recall");
    assert.equal(recall.body.project, project);
    assert.equal(recall.body.query, "which port does the API use?");
    assert.equal(recall.headers.authorization, `Bearer ${TOKEN}`);
    // later steps of the same turn reuse the recall
    const again = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, again);
    assert.equal(again.system.length, 2);
    assert.equal(sc.sent("POST /v1/recall").length, 1);
    await settle(hooks);
  } finally {
    await sc.close();
  }
});

test("an abstained recall injects nothing", async () => {
  const sc = await fakeSidecar(home, {
    "POST /v1/recall": () => [200, { retrieval_id: "r0", abstained: true, context: "", memories: [], conflicts: [] }],
  });
  try {
    const hooks = await load();
    await say(hooks, "hello");
    const output = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.deepEqual(output.system, ["You are opencode."]);
    assert.equal(sc.sent("POST /v1/recall").length, 1); // control: it did ask
    await settle(hooks);
  } finally {
    await sc.close();
  }
});

test("title-generation requests are skipped", async () => {
  const sc = await fakeSidecar(home);
  try {
    const hooks = await load();
    await say(hooks, "the API listens on port 9090");
    const title = { system: ["You are a title generator. You output ONLY a thread title."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, title);
    assert.equal(title.system.length, 1);
    assert.equal(sc.sent("POST /v1/recall").length, 0);
    const normal = { system: ["You are opencode."] }; // control
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, normal);
    assert.equal(normal.system.length, 2);
    await settle(hooks);
  } finally {
    await sc.close();
  }
});

test("session.idle writes the turn to the outbox before sending, then removes it; feedback follows", async () => {
  const seenInOutbox = [];
  const sc = await fakeSidecar(home, {
    "POST /v1/observe": (body) => {
      seenInOutbox.push(pendingOutbox().some((e) => e.body.request_id === body.request_id));
      return [200, { unit_id: "u1", turn: 1, created: true }];
    },
  });
  try {
    const hooks = await load();
    await say(hooks, "the API listens on port 9090");
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, { system: ["s"] });
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
    await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_1", status: { type: "idle" } } } });
    await hooks.dispose();
    const observes = sc.sent("POST /v1/observe");
    assert.equal(observes.length, 1, "idle and status:idle of one turn give one observe");
    assert.deepEqual(seenInOutbox, [true]);
    const body = observes[0].body;
    assert.equal(body.project, project);
    assert.equal(body.session, "ses_1");
    assert.equal(body.user, "the API listens on port 9090");
    assert.equal(body.assistant, "Noted: port 9090.");
    assert.equal(body.ts, new Date(1700000001000).toISOString());
    assert.match(body.request_id, /^oc-[0-9a-f]{32}$/);
    const [fb] = sc.sent("POST /v1/feedback");
    assert.equal(fb.body.retrieval_id, "r1");
    assert.equal(fb.body.answer, "Noted: port 9090.");
    assert.deepEqual(pendingOutbox(), []);
    const mode = fs.statSync(path.join(home, "outbox")).mode & 0o777;
    assert.equal(mode & 0o077, 0, "the outbox is private");
  } finally {
    await sc.close();
  }
});

test("request ids are stable: the same turn observed by two processes has one request_id", async () => {
  const sc = await fakeSidecar(home);
  try {
    for (let i = 0; i < 2; i++) {
      const hooks = await load();
      await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
      await hooks.dispose();
    }
    const ids = sc.sent("POST /v1/observe").map((r) => r.body.request_id);
    assert.equal(ids.length, 2);
    assert.equal(ids[0], ids[1]);
  } finally {
    await sc.close();
  }
});

test("a failed send stays in the outbox and is replayed on the next start", async () => {
  let down = true;
  const sc = await fakeSidecar(home, {
    "POST /v1/observe": () => (down ? [503, { error: "busy", code: "unavailable" }] : [200, { unit_id: "u1", turn: 1, created: true }]),
  });
  try {
    const first = await load();
    await first.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
    await first.dispose();
    const [pending] = pendingOutbox();
    assert.equal(pending.route, "/v1/observe");
    assert.equal(pending.body.user, "the API listens on port 9090");
    const fileMode = fs.statSync(path.join(home, "outbox", fs.readdirSync(path.join(home, "outbox"))[0])).mode & 0o777;
    assert.equal(fileMode, 0o600);

    down = false;
    const second = await load(fakeClient([])); // nothing new to observe: only the replay sends
    await second.dispose();
    const observes = sc.sent("POST /v1/observe");
    assert.equal(observes.length, 2);
    assert.equal(observes[1].body.request_id, observes[0].body.request_id);
    assert.deepEqual(pendingOutbox(), []);
  } finally {
    await sc.close();
  }
});

test("a request the sidecar rejects for good (422) is dropped from the outbox, not retried forever", async () => {
  const sc = await fakeSidecar(home, { "POST /v1/observe": () => [422, { error: "bad turn", code: "invalid" }] });
  try {
    const hooks = await load();
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
    await hooks.dispose();
    assert.equal(sc.sent("POST /v1/observe").length, 1);
    assert.deepEqual(pendingOutbox(), []);
  } finally {
    await sc.close();
  }
});

test("dispose awaits in-flight sends", async () => {
  let answered = false;
  const sc = await fakeSidecar(home, {
    "POST /v1/observe": async () => {
      await new Promise((r) => setTimeout(r, 400));
      answered = true;
      return [200, { unit_id: "u1", turn: 1, created: true }];
    },
  });
  try {
    const hooks = await load();
    const t0 = Date.now();
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
    assert.equal(answered, false, "the event handler does not wait for the send");
    assert.ok(Date.now() - t0 < 300);
    await hooks.dispose();
    assert.equal(answered, true);
    assert.deepEqual(pendingOutbox(), []);
  } finally {
    await sc.close();
  }
});

test("turn texts come from the event stream when session.messages fails", async () => {
  const sc = await fakeSidecar(home);
  try {
    const broken = { session: { messages: async () => { throw new Error("server closed"); } } };
    const hooks = await load(broken);
    const ev = (type, properties) => hooks.event({ event: { type, properties } });
    await ev("message.updated", { info: { id: "msg_u9", role: "user", sessionID: "ses_1", time: { created: 1 } } });
    await ev("message.part.updated", { part: { id: "p1", messageID: "msg_u9", sessionID: "ses_1", type: "text", text: "we use pnpm" } });
    await ev("message.updated", { info: { id: "msg_a9", role: "assistant", sessionID: "ses_1", time: { created: 2, completed: 3 } } });
    await ev("message.part.updated", { part: { id: "p2", messageID: "msg_a9", sessionID: "ses_1", type: "text", text: "Switching to pnpm." } });
    await ev("session.idle", { sessionID: "ses_1" });
    await hooks.dispose();
    const [obs] = sc.sent("POST /v1/observe");
    assert.equal(obs.body.user, "we use pnpm");
    assert.equal(obs.body.assistant, "Switching to pnpm.");
  } finally {
    await sc.close();
  }
});

test("tools answer with strings and call the right routes", async () => {
  const sc = await fakeSidecar(home, {
    "POST /v1/log/search": () => [200, { units: [{ unit_id: "u7", turn: 3, session: "s1", user: "port is 9090", assistant: "ok" }] }],
    "POST /v1/log/timeline": () => [200, { units: [] }],
    "POST /v1/log/window": () => [200, { units: [{ unit_id: "u7", turn: 3, snippet: "port is 9090" }] }],
    "POST /v1/memories": (body) => [200, { id: "m2", text: body.text }],
    "GET /v1/memories/m1/why": () => [200, { id: "m1", evidence: ["u7"] }],
    "DELETE /v1/memories/m1": () => [200, { id: "m1", state: "retracted" }],
  });
  process.env.DYNMEM_TOOLS = "all";
  try {
    const hooks = await load();
    const ctx = { sessionID: "ses_1", messageID: "msg_x", directory: project, worktree: project };
    await say(hooks, "what was the port again?");
    const t = hooks.tool;
    assert.deepEqual(Object.keys(t).sort(), ["log_search", "log_timeline", "log_window", "memory_forget", "memory_remember", "memory_search", "memory_why"]);
    for (const def of Object.values(t)) {
      assert.equal(typeof def.description, "string");
      for (const arg of Object.values(def.args)) assert.ok(["string", "integer,null"].includes(String(arg.type)));
    }

    const search = await t.memory_search.execute({ query: "port" }, ctx);
    assert.equal(search, "[m1] The API listens on port 9090. (score 0.91, active, project, fact)");
    const recall = sc.sent("POST /v1/recall").at(-1).body;
    assert.equal(recall.passive, true);
    assert.equal(recall.query, "port");

    assert.match(await t.memory_why.execute({ id: "m1" }, ctx), /"evidence"/);
    assert.equal(sc.sent("GET /v1/memories/m1/why")[0].url, `/v1/memories/m1/why?project=${encodeURIComponent(project)}`);
    assert.match(await t.memory_forget.execute({ id: "m1" }, ctx), /^Forgot memory m1\./);
    assert.equal(sc.sent("DELETE /v1/memories/m1").length, 1);
    assert.equal(await t.memory_remember.execute({ text: "We deploy on Fridays." }, ctx), "Remembered as m2.");
    assert.deepEqual(sc.sent("POST /v1/memories")[0].body, { project, text: "We deploy on Fridays." });

    assert.equal(await t.log_search.execute({ query: "port" }, ctx), "[u7] turn 3 (session s1)\nuser: port is 9090\nassistant: ok");
    assert.equal(await t.log_timeline.execute({ around_turn: null }, ctx), "No turns found.");
    assert.equal(sc.sent("POST /v1/log/timeline")[0].body.around_turn, undefined);
    assert.equal(await t.log_window.execute({ unit_id: "u7", radius: 2 }, ctx), "[u7] turn 3\nport is 9090");
    assert.deepEqual(sc.sent("POST /v1/log/window")[0].body, { project, unit_id: "u7", radius: 2 });
    await hooks.dispose();
    const misses = sc.sent("POST /v1/miss").map((r) => [r.body.tool, r.body.query, r.body.session]);
    assert.deepEqual(misses.sort(), [
      ["log_search", "port", "ses_1"],
      ["log_timeline", "what was the port again?", "ses_1"],
      ["log_window", "what was the port again?", "ses_1"],
    ]);
    // memory tools do not report misses (control)
    assert.equal(misses.length, 3);
  } finally {
    await sc.close();
  }
});

test("with no sidecar, nothing throws, tools explain, the turn waits in the outbox, and stdout stays clean", async () => {
  process.env.DYNMEM_AUTOSTART = "1";
  process.env.DYNMEM_BIN = path.join(home, "no-such-dynmem");
  process.env.DYNMEM_START_TIMEOUT_MS = "300";
  // the test runner itself reports through stdout (in binary), so watch text writes and console
  const writes = [];
  const origWrite = process.stdout.write;
  process.stdout.write = function (chunk, ...rest) {
    if (typeof chunk === "string") writes.push(chunk);
    return origWrite.call(this, chunk, ...rest);
  };
  const consoleNames = ["log", "info", "warn", "error", "debug"];
  const origConsole = consoleNames.map((n) => console[n]);
  for (const n of consoleNames) console[n] = (...a) => writes.push(a.join(" "));
  let hooks;
  try {
    hooks = await load();
    await say(hooks, "the API listens on port 9090");
    const output = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.deepEqual(output.system, ["You are opencode."]);
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
    await hooks.event({ event: null });
    await hooks["chat.message"](undefined, undefined);
    await hooks["experimental.chat.system.transform"](undefined, undefined);
    const out = await hooks.tool.memory_search.execute({ query: "port" }, {});
    assert.match(out, /^dynmem: memory_search failed: memory is off: .*no-such-dynmem does not exist.*dynmem serve --detach/);
    await hooks.dispose();
  } finally {
    process.stdout.write = origWrite;
    consoleNames.forEach((n, i) => (console[n] = origConsole[i]));
  }
  assert.equal(writes.join(""), "");
  assert.equal(pendingOutbox().length, 1);
  const log = fs.readFileSync(path.join(home, "logs", "opencode-plugin.log"), "utf8");
  assert.match(log, /"memory is off".*no-such-dynmem does not exist/);
});

test("starts the sidecar with `serve --detach` and DYNMEM_HOME when none answers", async () => {
  const marker = path.join(home, "spawned.txt");
  const bin = path.join(home, "fake-dynmem");
  // write then rename, so the test never reads a half-written marker
  fs.writeFileSync(bin, `#!/bin/sh\necho "$@ $DYNMEM_HOME" > "${marker}.tmp" && mv "${marker}.tmp" "${marker}"\n`, { mode: 0o755 });
  process.env.DYNMEM_AUTOSTART = "1";
  process.env.DYNMEM_BIN = bin;
  process.env.DYNMEM_START_TIMEOUT_MS = "10000";
  const sc = await fakeSidecar(home);
  fs.rmSync(path.join(home, "sidecar.json")); // nothing is running yet
  try {
    const hooks = await load();
    // play the part of `dynmem serve --detach`: once spawned, publish sidecar.json
    const deadline = Date.now() + 5000;
    while (!fs.existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(fs.readFileSync(marker, "utf8").trim(), `serve --detach ${home}`);
    sc.writeInfo();
    await say(hooks, "port?");
    const output = { system: ["s"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.equal(output.system.length, 2);
    await hooks.dispose();
  } finally {
    await sc.close();
  }
});

test("the data dir falls back to $XDG_DATA_HOME/dynmem", async () => {
  delete process.env.DYNMEM_HOME;
  process.env.XDG_DATA_HOME = home;
  const dataDir = path.join(home, "dynmem");
  fs.mkdirSync(dataDir);
  const sc = await fakeSidecar(dataDir);
  try {
    const hooks = await load();
    await say(hooks, "port?");
    const output = { system: ["s"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.equal(output.system.length, 2);
    await hooks.dispose();
    assert.ok(fs.existsSync(path.join(dataDir, "logs", "opencode-plugin.log")));
  } finally {
    await sc.close();
  }
});

test("the plugin file imports only node: builtins", () => {
  const src = fs.readFileSync(path.join(here, "../../../bridge/opencode/dynmem.js"), "utf8");
  const specs = [...src.matchAll(/^\s*import\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
  assert.ok(specs.length > 0);
  for (const s of specs) assert.match(s, /^node:/);
  const exported = [...src.matchAll(/^export\s+(?:const|function|default)\s*(\w*)/gm)].map((m) => m[1]);
  assert.deepEqual(exported, ["DynmemPlugin", "DynmemPlugin"]);
});

// ---- issue 13 ---------------------------------------------------------------------------------

test("by default two short tools: memory_search falls back to the log (recording a miss), memory_forget", async () => {
  const sc = await fakeSidecar(home, {
    "POST /v1/recall": (body) => [200, body.query === "nothing" ? { retrieval_id: "r0", abstained: true, context: "", memories: [], conflicts: [] }
      : { retrieval_id: "r1", abstained: false, context: "<m/>", memories: [{ id: "m1", text: "The API listens on port 9090.", score: 0.9, state: "active", scope: "project", kind: "fact" }], conflicts: [] }],
    "POST /v1/log/search": () => [200, { units: [{ unit_id: "u7", turn: 3, session: "s1", user: "deploys go out on Thursdays", assistant: "ok" }] }],
  });
  try {
    const hooks = await load();
    const t = hooks.tool;
    assert.deepEqual(Object.keys(t).sort(), ["memory_forget", "memory_search"]);
    // what opencode sends per request is roughly {type, function: {name, description, parameters}}
    const bytes = JSON.stringify(Object.entries(t).map(([name, d]) => ({ name, description: d.description, parameters: { type: "object", properties: d.args } }))).length;
    assert.ok(bytes < 300, `tool definitions are ${bytes} bytes`);
    assert.match(await t.memory_search.execute({ query: "port" }, { sessionID: "ses_1" }), /^\[m1\] The API listens/);
    assert.equal(sc.sent("POST /v1/miss").length, 0); // memory answered: no miss (control)
    const fallback = await t.memory_search.execute({ query: "nothing" }, { sessionID: "ses_1" });
    assert.match(fallback, /^No memory matches\. Past turns:\n\[u7\] turn 3/);
    await hooks.dispose();
    assert.deepEqual(sc.sent("POST /v1/miss").map((r) => r.body.tool), ["memory_search"]);
  } finally {
    await sc.close();
  }
});

test("DYNMEM_TOOLS=none offers no tool and still injects", async () => {
  process.env.DYNMEM_TOOLS = "none";
  const sc = await fakeSidecar(home);
  try {
    const hooks = await load();
    assert.deepEqual(hooks.tool, {});
    await say(hooks, "port?");
    const output = { system: ["s"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.equal(output.system.length, 2);
    await hooks.dispose();
  } finally {
    await sc.close();
  }
});

test("a start that cannot happen fails fast and tells each session once that memory is off", async () => {
  process.env.DYNMEM_AUTOSTART = "1";
  process.env.DYNMEM_BIN = "dynmem-not-on-path-" + process.pid; // not a path: spawn fails with ENOENT
  process.env.DYNMEM_START_TIMEOUT_MS = "20000";
  const toasts = [];
  const client = { ...fakeClient(), tui: { showToast: async ({ body }) => toasts.push(body) } };
  const hooks = await DynmemPlugin({ client, directory: project, worktree: "/" });
  const t0 = Date.now();
  await say(hooks, "port?");
  const output = { system: ["s"] };
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
  assert.ok(Date.now() - t0 < 3000, `waited ${Date.now() - t0} ms for a start that had failed`);
  assert.deepEqual(output.system, ["s"]);
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, { system: ["s"] });
  await say(hooks, "again?", "ses_2");
  await hooks["experimental.chat.system.transform"]({ sessionID: "ses_2", model: {} }, { system: ["s"] });
  await hooks.dispose();
  const off = toasts.filter((b) => /memory is off/.test(b.message));
  assert.equal(off.length, 2, JSON.stringify(toasts)); // once per session
  assert.match(off[0].message, /not on PATH/);
  assert.equal(off[0].variant, "warning");
});

test("the user's announced sidecar is used whatever DYNMEM_HOME says, and the notice names its data dir", async () => {
  const other = fs.mkdtempSync(path.join(os.tmpdir(), "dynmem-other-"));
  const state = path.join(home, "state");
  fs.mkdirSync(state, { recursive: true });
  const sc = await fakeSidecar(other);
  fs.writeFileSync(path.join(state, "sidecar.json"), JSON.stringify({ url: sc.url, pid: 4242, token_file: path.join(other, "token"), data_dir: other }));
  process.env.DYNMEM_AUTOSTART = "1";
  process.env.DYNMEM_BIN = path.join(home, "must-not-be-started");
  const toasts = [];
  try {
    const hooks = await DynmemPlugin({ client: { ...fakeClient(), tui: { showToast: async ({ body }) => toasts.push(body) } }, directory: project, worktree: "/" });
    await say(hooks, "port?");
    const output = { system: ["s"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, output);
    assert.equal(output.system.length, 2); // served by the announced sidecar: nothing was started
    await hooks.dispose();
    assert.equal(sc.sent("POST /v1/recall").length, 1);
    assert.equal(toasts.filter((b) => b.message.includes(`data dir ${other}`)).length, 1);
    const log = fs.readFileSync(path.join(home, "logs", "opencode-plugin.log"), "utf8");
    assert.match(log, /using the dynmem sidecar.*one sidecar per user/);
    assert.doesNotMatch(log, /starting the sidecar/);
  } finally {
    await sc.close();
    fs.rmSync(other, { recursive: true, force: true });
  }
});

test("two copies of the plugin (project and global install) register once per directory", async () => {
  const copy = await import(`../../../bridge/opencode/dynmem.js?copy=global`);
  const sc = await fakeSidecar(home);
  try {
    const first = await load();
    const second = await copy.DynmemPlugin({ client: fakeClient(), directory: project, worktree: "/" });
    assert.ok(first.tool && first["experimental.chat.system.transform"]);
    assert.deepEqual(second, {});
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "dynmem-else-"));
    const third = await copy.DynmemPlugin({ client: fakeClient(), directory: elsewhere, worktree: "/" });
    assert.ok(third.tool); // another directory is served (control)
    await third.dispose();
    await first.dispose();
    fs.rmSync(elsewhere, { recursive: true, force: true });
  } finally {
    await sc.close();
  }
});

test("the project is the repository: the same from a subfolder and from a linked worktree", async () => {
  const repo = fs.realpathSync(project);
  fs.mkdirSync(path.join(repo, ".git", "worktrees", "wt"), { recursive: true });
  fs.writeFileSync(path.join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n");
  const wt = fs.mkdtempSync(path.join(os.tmpdir(), "dynmem-wt-"));
  fs.writeFileSync(path.join(wt, ".git"), `gitdir: ${path.join(repo, ".git", "worktrees", "wt")}\n`);
  fs.mkdirSync(path.join(repo, "src", "api"), { recursive: true });
  const sc = await fakeSidecar(home);
  try {
    for (const [directory, worktree] of [[path.join(repo, "src", "api"), "/"], [wt, wt], [repo, repo]]) {
      const hooks = await DynmemPlugin({ client: fakeClient(), directory, worktree });
      await say(hooks, "port?");
      await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1", model: {} }, { system: ["s"] });
      await hooks.dispose();
    }
    assert.deepEqual(sc.sent("POST /v1/recall").map((r) => r.body.project), [repo, repo, repo]);
  } finally {
    await sc.close();
    fs.rmSync(wt, { recursive: true, force: true });
  }
});

test("the outbox holds redacted turns only", async () => {
  const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
  const user = { info: { id: "msg_u9", role: "user", sessionID: "ses_1" }, parts: [{ type: "text", text: `deploy with OPENAI_API_KEY=${secret} please` }] };
  const answer = { ...ASSISTANT_MSG, info: { ...ASSISTANT_MSG.info, id: "msg_a9", parentID: "msg_u9" } };
  const hooks = await load(fakeClient([user, answer])); // no sidecar: the turn stays in the outbox
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
  await hooks.dispose();
  const raw = fs.readFileSync(path.join(home, "outbox", fs.readdirSync(path.join(home, "outbox"))[0]), "utf8");
  assert.ok(!raw.includes(secret), raw);
  const [entry] = pendingOutbox();
  assert.match(entry.body.user, /^deploy with OPENAI_API_KEY=\[REDACTED:[a-z_]+\] please$/); // the rest is kept (control)
});
