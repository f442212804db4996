// dynamics-memory plugin for opencode (plugin API 1.18.x).
//
// Injects what the project memory knows into the system prompt, captures every finished turn
// (through an outbox file, so a turn survives opencode exiting or being killed), sends
// feedback, and gives the agent memory and log tools. It talks to the `dynmem serve` sidecar
// over HTTP on 127.0.0.1 and starts it when none answers. No npm dependency: node: builtins
// and the global fetch only. Hooks never throw; problems go to <data-dir>/logs/opencode-plugin.log.
//
// Only plugin functions are exported: opencode may call every export of a plugin module.
// Tool args are plain JSON Schema (no zod import); opencode 1.18 then marks every arg as
// required, so optional args are nullable instead.

import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const INSTALLED = {}; // dynmem:installed (filled in by `dynmem plugin install`)

const TITLE_PREFIX = "You are a title generator";
const REGISTRY = Symbol.for("dynmem.opencode.plugin"); // shared by every copy loaded in this process
const LOG_MAX_BYTES = 1_000_000;
const SPAWN_BACKOFF_MS = 60_000; // do not respawn a failing sidecar more than once a minute
const HEALTH_TTL_MS = 30_000; // re-check a known-good sidecar after this long

// ---------------------------------------------------------------------------------------------
// settings

function intEnv(env, name, fallback) {
  const n = Number.parseInt(env[name] ?? "", 10);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

function settingsFrom(env) {
  const home = env.HOME || os.homedir();
  // the data dir: $DYNMEM_HOME, else the one recorded at install time, else the default
  const dataDir = env.DYNMEM_HOME
    ? path.resolve(env.DYNMEM_HOME)
    : INSTALLED.dataDir || path.join(env.XDG_DATA_HOME || path.join(home, ".local", "share"), "dynmem");
  // where the user's running sidecar announces itself, whatever its data dir (bridge/server.py)
  const runtimeDir = env.DYNMEM_STATE_DIR
    ? path.resolve(env.DYNMEM_STATE_DIR)
    : path.join(env.XDG_STATE_HOME || path.join(home, ".local", "state"), "dynmem");
  return {
    dataDir,
    dataDirExplicit: Boolean(env.DYNMEM_HOME),
    runtimeDir,
    bin: env.DYNMEM_BIN || INSTALLED.bin || "dynmem",
    tools: ["default", "all", "none"].includes(env.DYNMEM_TOOLS) ? env.DYNMEM_TOOLS : "default",
    disabled: env.DYNMEM_DISABLE === "1",
    debug: env.DYNMEM_DEBUG === "1",
    autostart: env.DYNMEM_AUTOSTART !== "0",
    project: env.DYNMEM_PROJECT || "",
    startTimeoutMs: intEnv(env, "DYNMEM_START_TIMEOUT_MS", 20_000),
    recallTimeoutMs: intEnv(env, "DYNMEM_RECALL_TIMEOUT_MS", 8_000),
    requestTimeoutMs: intEnv(env, "DYNMEM_REQUEST_TIMEOUT_MS", 10_000),
    disposeTimeoutMs: intEnv(env, "DYNMEM_DISPOSE_TIMEOUT_MS", 5_000),
    budgetTokens: intEnv(env, "DYNMEM_BUDGET_TOKENS", 0),
  };
}

function sha(text, n = 32) {
  return createHash("sha256").update(text).digest("hex").slice(0, n);
}

/** Resolve with `fallback` after `ms` unless `promise` settles first; never keeps the process alive. */
function within(promise, ms, fallback) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref?.();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function ensureDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

// ---------------------------------------------------------------------------------------------
// log file (never stdout: opencode owns the terminal)

class Log {
  constructor(file, debug = false) {
    this.file = file;
    this.debugging = debug;
  }

  write(level, msg, extra) {
    try {
      ensureDir(path.dirname(this.file));
      try {
        if (fs.statSync(this.file).size > LOG_MAX_BYTES) fs.renameSync(this.file, `${this.file}.1`);
      } catch {
        // no log yet
      }
      const line = { ts: new Date().toISOString(), pid: process.pid, level, msg, ...(extra || {}) };
      fs.appendFileSync(this.file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch {
      // logging must never break opencode
    }
  }

  debug(msg, extra) {
    if (this.debugging) this.write("debug", msg, extra);
  }

  info(msg, extra) {
    this.write("info", msg, extra);
  }

  error(msg, extra) {
    this.write("error", msg, extra);
  }
}

// ---------------------------------------------------------------------------------------------
// sidecar connection

class SidecarError extends Error {
  constructor(message, { status = 0, code = "unavailable", retry = true } = {}) {
    super(message);
    this.name = "SidecarError";
    this.status = status;
    this.code = code;
    this.retry = retry; // false: the sidecar refused this request for good (4xx)
  }
}

class Sidecar {
  constructor(settings, log) {
    this.s = settings;
    this.log = log;
    this.conn = null; // {url, token, dataDir, pid}
    this.checkedAt = 0;
    this.spawnedAt = -Infinity;
    this.pending = null;
    this.down = ""; // why memory is off ("" while it works)
  }

  /** A sidecar.json (the user's announced sidecar, or the data dir's own), or null. */
  readFile(file, dataDir) {
    try {
      const info = JSON.parse(fs.readFileSync(file, "utf8"));
      if (!info || typeof info.url !== "string") return null;
      const dir = info.data_dir ? path.resolve(info.data_dir) : dataDir;
      let token = "";
      if (info.token_file) {
        const tf = path.isAbsolute(info.token_file) ? info.token_file : path.join(dir, info.token_file);
        token = fs.readFileSync(tf, "utf8").trim();
      }
      return { url: info.url.replace(/\/+$/, ""), token, dataDir: dir, pid: info.pid };
    } catch {
      return null;
    }
  }

  /** Candidates in order: the one sidecar of this user (any data dir), then this data dir's own. */
  candidates() {
    const out = [];
    const user = this.readFile(path.join(this.s.runtimeDir, "sidecar.json"), null);
    if (user) out.push(user);
    const own = this.readFile(path.join(this.s.dataDir, "sidecar.json"), this.s.dataDir);
    if (own && (!user || own.url !== user.url)) out.push(own);
    return out;
  }

  async healthy(conn) {
    try {
      const res = await fetch(`${conn.url}/v1/health`, { signal: AbortSignal.timeout(1_500) });
      if (!res.ok) return false;
      const body = await res.json();
      return body?.ok === true;
    } catch {
      return false;
    }
  }

  async find() {
    for (const c of this.candidates()) if (await this.healthy(c)) return c;
    return null;
  }

  /** A live connection, starting the sidecar when none answers; null when it cannot be had. */
  connect() {
    if (this.conn && Date.now() - this.checkedAt < HEALTH_TTL_MS) return Promise.resolve(this.conn);
    if (!this.pending) {
      this.pending = this.establish().finally(() => {
        this.pending = null;
      });
    }
    return this.pending;
  }

  async establish() {
    const found = await this.find();
    if (found) return this.remember(found);
    this.conn = null;
    if (!this.s.autostart) return this.off("no dynmem sidecar is running (autostart is off: run `dynmem serve --detach`)");
    if (Date.now() - this.spawnedAt < SPAWN_BACKOFF_MS) return this.off(this.down || "the dynmem sidecar is starting or failed to start");
    this.spawnedAt = Date.now();
    const started = this.start();
    const deadline = Date.now() + this.s.startTimeoutMs;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      const info = await this.find();
      if (info) {
        this.log.info("sidecar started", { url: info.url, data_dir: info.dataDir });
        return this.remember(info);
      }
      if (started.failed) return this.off(started.failed); // fail fast: no wait for a start that is over
    }
    this.log.error("sidecar did not answer in time", { timeout_ms: this.s.startTimeoutMs });
    return this.off(`the dynmem sidecar did not answer within ${Math.round(this.s.startTimeoutMs / 1000)} s (see ${path.join(this.s.dataDir, "logs", "sidecar-start.log")})`);
  }

  off(reason) {
    if (reason !== this.down) this.log.error("memory is off", { reason });
    this.down = reason;
    return null;
  }

  remember(conn) {
    if (this.down) this.log.info("memory is back", { url: conn.url });
    this.down = "";
    if (!this.conn || this.conn.url !== conn.url) {
      const other = this.s.dataDirExplicit && conn.dataDir && path.resolve(conn.dataDir) !== this.s.dataDir;
      this.log[other ? "error" : "info"]("using the dynmem sidecar", {
        url: conn.url, sidecar_pid: conn.pid, data_dir: conn.dataDir, configured_data_dir: this.s.dataDir,
        ...(other ? { note: "DYNMEM_HOME names another data dir; the user's running sidecar is used (one sidecar per user)" } : {}),
      });
    }
    this.conn = conn;
    this.checkedAt = Date.now();
    return conn;
  }

  /** Start `dynmem serve --detach`; the returned object's `failed` is set as soon as the start fails. */
  start() {
    const state = { failed: "" };
    const logFile = path.join(this.s.dataDir, "logs", "sidecar-start.log");
    const bin = this.s.bin;
    if (bin.includes(path.sep) && !fs.existsSync(bin)) {
      state.failed = `the dynmem executable ${bin} does not exist (reinstall with \`dynmem plugin install\` or set DYNMEM_BIN)`;
      return state;
    }
    try {
      ensureDir(path.join(this.s.dataDir, "logs"));
      const out = fs.openSync(logFile, "a", 0o600);
      const child = spawn(bin, ["serve", "--detach"], {
        detached: true,
        stdio: ["ignore", out, out],
        env: { ...process.env, DYNMEM_HOME: this.s.dataDir },
      });
      child.on("error", (err) => {
        state.failed = err?.code === "ENOENT"
          ? `cannot start the dynmem sidecar: \`${bin}\` is not on PATH (run \`dynmem plugin install\` from the dynmem installation, or set DYNMEM_BIN)`
          : `cannot start the dynmem sidecar: ${String(err?.message || err)}`;
      });
      // `serve --detach` exits once the sidecar answers (0) or when it could not start (non-zero)
      child.on("exit", (code) => {
        if (code) state.failed = `\`${bin} serve --detach\` failed with status ${code} (see ${logFile})`;
      });
      child.unref();
      fs.closeSync(out);
      this.log.info("starting the sidecar", { bin, data_dir: this.s.dataDir });
    } catch (err) {
      state.failed = `cannot start the dynmem sidecar: ${String(err?.message || err)}`;
    }
    return state;
  }

  /** One JSON request; throws SidecarError. */
  async request(method, route, body, timeoutMs = this.s.requestTimeoutMs) {
    const conn = await this.connect();
    if (!conn) throw new SidecarError(`memory is off: ${this.down || "the dynmem sidecar is not running"}`);
    let res;
    try {
      res = await fetch(`${conn.url}${route}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${conn.token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      this.conn = null; // look again next time (the sidecar may have moved or died)
      throw new SidecarError(`sidecar request failed: ${err?.name === "TimeoutError" ? "timeout" : String(err)}`);
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const retry = res.status >= 500 || res.status === 408 || res.status === 429 || res.status === 401;
      if (res.status === 401) this.conn = null; // the token may have been rotated by a restart
      throw new SidecarError(data?.error || `HTTP ${res.status}`, { status: res.status, code: data?.code || "http", retry });
    }
    return data;
  }
}

// ---------------------------------------------------------------------------------------------
// secrets: the outbox holds turns while the sidecar is down, so they are redacted first, with
// the detectors of engine/redact.py (same kinds, priorities, merging and markers).

// BEGIN secret detectors (generated from engine/redact.py by `python -m bridge.plugin_redact --write`)
const SECRET_DETECTORS = [
{
"kind": "private_key",
"source": "-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:[ \\t]*\\r?\\n(?:[A-Za-z0-9-]+:[^\\n]*|[A-Za-z0-9+/=]+))*)",
"flags": ""
},
{
"kind": "aws_access_key_id",
"source": "\\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\\b",
"flags": ""
},
{
"kind": "aws_secret_access_key",
"source": "aws_?secret_?(?:access_?)?key[\\\"']?\\s*(?:=|:|=>)\\s*[\\\"']?(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
"flags": "i"
},
{
"kind": "github_token",
"source": "(?<![A-Za-z0-9_-])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "github_token",
"source": "(?<![A-Za-z0-9_-])github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "gitlab_token",
"source": "(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "npm_token",
"source": "(?<![A-Za-z0-9_-])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "pypi_token",
"source": "(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "slack_token",
"source": "(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "slack_token",
"source": "(?<![A-Za-z0-9_-])xapp-\\d-[A-Za-z0-9-]{10,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "slack_webhook",
"source": "https://hooks\\.slack\\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}",
"flags": ""
},
{
"kind": "discord_webhook",
"source": "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d+/[\\w-]{20,}",
"flags": ""
},
{
"kind": "stripe_key",
"source": "(?<![A-Za-z0-9_-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "stripe_key",
"source": "(?<![A-Za-z0-9_-])whsec_[A-Za-z0-9]{24,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "anthropic_key",
"source": "(?<![A-Za-z0-9_-])sk-ant-(?:[a-z]+\\d*-)?[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "openai_key",
"source": "(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z_-]*\\d)[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "google_api_key",
"source": "(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "huggingface_token",
"source": "(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{34,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "twilio_key",
"source": "\\bSK[0-9a-fA-F]{32}\\b",
"flags": ""
},
{
"kind": "sendgrid_key",
"source": "(?<![A-Za-z0-9_-])SG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{30,50}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "discord_token",
"source": "(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6,7}\\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "telegram_token",
"source": "\\b\\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "shopify_token",
"source": "\\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\\b",
"flags": ""
},
{
"kind": "digitalocean_token",
"source": "\\bdo[pro]_v1_[a-f0-9]{64}\\b",
"flags": ""
},
{
"kind": "vault_token",
"source": "(?<![A-Za-z0-9_-])hv[sbr]\\.[A-Za-z0-9_-]{24,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "wifi_password",
"source": "\\bWIFI:(?:[A-Z]:(?:[^;\\\\]|\\\\.)*;)*?P:(?<secret>(?:[^;\\\\\\s]|\\\\.)+)",
"flags": "i"
},
{
"kind": "url_secret",
"source": "[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|access_token|token|api_?key|key|secret|client_secret|password|passwd|pwd|auth)=(?<secret>[^&\\s#'\\\"<>]{8,})",
"flags": "i"
},
{
"kind": "cli_secret_flag",
"source": "(?<![\\w-])(?:-u|--user)[ \\t]+[\\\"']?[^\\s:'\\\"]+:(?<secret>[^\\s'\\\"@]+)",
"flags": ""
},
{
"kind": "cli_secret_flag",
"source": "^(?=[^\\n]*(?:\\blogin\\b|\\bsshpass\\b|\\bmysql(?:dump|admin)?\\b|\\bmariadb\\b|[ \\t]-u[ \\t]))[^\\n]*?(?<![\\w-])-p[ \\t]*(?<q>[\\\"']?)(?<secret>(?!\\d+(?:\\s|$))[^\\s'\\\"]{3,})\\k<q>",
"flags": "im"
},
{
"kind": "jwt",
"source": "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])",
"flags": ""
},
{
"kind": "connection_string",
"source": "\\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|redis|rediss|amqps?|mssql|sqlserver|cockroachdb|clickhouse)(?:\\+[a-z0-9]+)?://[^\\s:/@'\\\"]*:(?<secret>[^\\s@/'\\\"]+)@(?=[A-Za-z0-9\\[._-])",
"flags": "i"
},
{
"kind": "url_password",
"source": "\\b[a-z][a-z0-9+.-]{0,30}://[^\\s:/@'\\\"]*:(?<secret>[^\\s@/'\\\"]+)@(?=[A-Za-z0-9\\[._-])",
"flags": "i"
},
{
"kind": "connection_string",
"source": "\\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?<secret>[^;\\s'\\\"]{8,})",
"flags": "i"
},
{
"kind": "authorization",
"source": "\\b(?:proxy-)?authorization[\\\"']?\\s*[:=]\\s*[\\\"']?(?:bearer|basic|token|digest)\\s+(?<secret>[A-Za-z0-9._~+/=-]{6,})",
"flags": "i"
},
{
"kind": "bearer_token",
"source": "\\bbearer\\s+(?<secret>[A-Za-z0-9._~+/-]{16,}=*)",
"flags": "i"
},
{
"kind": "api_key_header",
"source": "\\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token)[\\\"']?\\s*:\\s*[\\\"']?(?<secret>[A-Za-z0-9._~+/=-]{8,})",
"flags": "i"
},
{
"kind": "netrc_password",
"source": "\\blogin\\s+\\S+\\s+password\\s+(?<secret>\\S+)",
"flags": ""
},
{
"kind": "cli_secret_flag",
"source": "(?<![\\w-])--(?:password|passwd|token|api-key|secret|client-secret)\\s+(?<q>[\\\"']?)(?<secret>[^\\s'\\\"]{3,})\\k<q>",
"flags": "i"
},
{
"kind": "secret_assignment",
"source": "(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)[\\\"']?\\s*(?::=|=>|=|:)\\s*(?<q>[\\\"'])(?<secret>(?:(?!\\k<q>)[^\\n\\\\]|\\\\.){1,500})\\k<q>",
"flags": "i"
},
{
"kind": "secret_assignment",
"source": "(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)[ \\t]+(?<q>[\\\"'])(?<secret>[^\\\"'\\n]{1,500})\\k<q>",
"flags": "i"
},
{
"kind": "secret_assignment",
"source": "(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)\\s*(?<![=!<>])(?:=|:=)(?!=)\\s*(?<secret>[^\\s'\\\"`;&,<>)\\]}]+)",
"flags": "i"
},
{
"kind": "secret_assignment",
"source": "[\\\"'][A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)[\\\"']\\s*:\\s*(?<secret>[^\\s'\\\"`;&,<>)\\]}]+)",
"flags": "i"
},
{
"kind": "secret_assignment",
"source": "^[ \\t-]*[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account|auth)[_-]?key|apikey)[ \\t]*:[ \\t]*(?<secret>[^\\s'\\\"#]+)[ \\t]*$",
"flags": "im"
},
{
"kind": "secret_in_prose",
"source": "\\b(?:password|passwd|passphrase|secret|token|credentials?|api[ _-]?key|access[ _-]?key|auth[ _-]?token|private[ _-]?key|key|value)\\b(?![ \\t]+fingerprints?\\b)[^\\n]{0,60}?(?<![A-Za-z0-9_-])(?<!:)(?<secret>(?=[A-Za-z0-9+/_-]*\\d)[A-Za-z0-9+/_-]{32,}={0,2})(?![A-Za-z0-9_-])",
"flags": "i"
},
{
"kind": "passphrase",
"source": "(?<![\\w-])(?:pass[ -]?phrases?|(?:seed|recovery|mnemonic|wallet|secret)[ \\t]+phrases?)(?![\\w-])(?:(?:[ \\t]+(?!(?:is|was|are|were|to|as|and|but)\\b)[\\w./@~()!-]*[\\w/@~()](?![\\w.@~!-])){0,8}?[ \\t]*(?:(?<!\\w)(?:is|was|are|were|ist|es|est|[\u00e9e]|\u00e8|er|\u00e4r|jest|on|to|becomes|will\\s+be|should\\s+be|equals|of)(?!\\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|\u2192|['\u2019]s)(?:[ \\t]+(?:just|now|still|probably|actually|simply|literally|currently|again|also|always))?[ \\t]*(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)|[^\\s\\\"'`\u201c\u201d][^\\n,;:!?()]{0,200}?[^\\s.,;:!?()](?=[ \\t]*(?:[.,;:!?()\\n]|$|\\band\\b|\\bbut\\b|\\bso\\b)))|[ \\t]+(?<quoted>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)))",
"flags": "i"
},
{
"kind": "phrase_in_context",
"source": "(?<![\\w-])phrases?(?![\\w-])(?:[ \\t]*(?:(?:(?<!\\w)(?:is|was|are|were|ist|es|est|[\u00e9e]|\u00e8|er|\u00e4r|jest|on|to|becomes|will\\s+be|should\\s+be|equals|of)(?!\\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|\u2192|['\u2019]s))?)[ \\t]*(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d))",
"flags": "i"
},
{
"kind": "prose_password",
"source": "(?<![\\w-])(?:pas{1,2}w(?:or|ro|r|o)?ds?|pwd|pword|pw|passcodes?|passwort|kennwort|contrase[\u00f1n]a|mot[ \\t]+de[ \\t]+passe|mdp|senha|palavra-passe|wachtwoord|l[\u00f6o]senord|has[\u0142l]o|salasana|parola[ \\t]+d'ordine|clave)(?![\\w-])(?![ \\t]+(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)\\b)(?:(?:[ \\t]+(?!(?:is|was|are|were|to|as|and|but)\\b)[\\w./@~()!-]*[\\w/@~()](?![\\w.@~!-])){0,8}?[ \\t]*(?:(?<!\\w)(?:is|was|are|were|ist|es|est|[\u00e9e]|\u00e8|er|\u00e4r|jest|on|to|becomes|will\\s+be|should\\s+be|equals|of)(?!\\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|\u2192|['\u2019]s)(?:[ \\t]+(?:just|now|still|probably|actually|simply|literally|currently|again|also|always))?[ \\t]*|[ \\t]+)(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)|[^\\s\\\"'`\u201c\u201d]{1,200}?(?=[.,;:?)\\]]*(?:\\s|$)))",
"flags": "i"
},
{
"kind": "prose_code",
"source": "(?<![\\w-])(?:(?:door|gate|entry|alarm|safe|lock|unlock|keypad|backup|recovery|security|verification|access|one-time|otp|2fa|mfa|sms|sim|garage|building)[ \\t-]?codes?|pins?(?:[ -]?(?:code|number))?|puks?|combos?|combinations?|codice|c[\u00f3o]digo)(?![\\w-])(?![ \\t]+(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)\\b)(?:[ \\t]+(?!(?:is|was|are|were|to|as|and|but)\\b)[\\w./@~()!-]*[\\w/@~()](?![\\w.@~!-])){0,14}?[ \\t]*(?:(?:(?<!\\w)(?:is|was|are|were|ist|es|est|[\u00e9e]|\u00e8|er|\u00e4r|jest|on|to|becomes|will\\s+be|should\\s+be|equals|of)(?!\\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|\u2192|['\u2019]s)(?:[ \\t]+(?:just|now|still|probably|actually|simply|literally|currently|again|also|always))?[ \\t]*)?(?<![\\w.,-])(?<secret>(?:\\d[ -]?){3,11}\\d|(?=[A-Za-z-]*\\d)[A-Za-z0-9]{3,8}(?:-[A-Za-z0-9]{3,8}){1,5})(?![\\w.])",
"flags": "i"
},
{
"kind": "prose_secret",
"source": "(?<![\\w-])(?:(?:api|access|secret|private|signing|encryption|master|account|auth|client|app|deploy|bot|license|licence|product|session|service|root|admin)[ _-]?(?:key|token|secret)s?|tokens?|secrets?|credentials?|creds|pass|auth|login)(?![\\w-])(?![ \\t]+(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)\\b)(?:[ \\t]+(?!(?:is|was|are|were|to|as|and|but)\\b)[\\w./@~()!-]*[\\w/@~()](?![\\w.@~!-])){0,8}?[ \\t]*(?:(?<!\\w)(?:is|was|are|were|ist|es|est|[\u00e9e]|\u00e8|er|\u00e4r|jest|on|to|becomes|will\\s+be|should\\s+be|equals|of)(?!\\w)|(?<![=!<>])=(?!=)|:(?!:)|->|=>|\u2192|['\u2019]s)(?:[ \\t]+(?:just|now|still|probably|actually|simply|literally|currently|again|also|always))?[ \\t]*(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)|[^\\s\\\"'`\u201c\u201d]{1,200}?(?=[.,;:?)\\]]*(?:\\s|$)))",
"flags": "i"
},
{
"kind": "prose_password",
"source": "(?<!\\S)(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)|[^\\s\\\"'`\u201c\u201d]{1,200})[ \\t]+as[ \\t]+(?:(?:the|our|my|your|a|an|his|her|their|its)[ \\t]+)?(?:[\\w.-]+[ \\t]+){0,4}?(?:pas{1,2}w(?:or|ro|r|o)?ds?|pwd|pword|pw|passcodes?|passwort|kennwort|contrase[\u00f1n]a|mot[ \\t]+de[ \\t]+passe|mdp|senha|palavra-passe|wachtwoord|l[\u00f6o]senord|has[\u0142l]o|salasana|parola[ \\t]+d'ordine|clave)(?![\\w-])(?![ \\t]+(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)\\b)",
"flags": "i"
},
{
"kind": "prose_secret",
"source": "(?<!\\S)(?<secret>(?<![\\w'\u2019])(?:\\\"[^\\\"\\n]{1,200}\\\"|'[^'\\n]{1,200}'|`[^`\\n]{1,200}`|\u201c[^\u201d\\n]{1,200}\u201d)|[^\\s\\\"'`\u201c\u201d]{1,200})[ \\t]+(?:is|was|will[ \\t]+be|as)[ \\t]+(?:(?:the|our|my|your|a|an|his|her|their|its)[ \\t]+)?(?:[\\w.-]+[ \\t]+){0,4}?(?:(?:pas{1,2}w(?:or|ro|r|o)?ds?|pwd|pword|pw|passcodes?|passwort|kennwort|contrase[\u00f1n]a|mot[ \\t]+de[ \\t]+passe|mdp|senha|palavra-passe|wachtwoord|l[\u00f6o]senord|has[\u0142l]o|salasana|parola[ \\t]+d'ordine|clave)|(?:(?:api|access|secret|private|signing|encryption|master|account|auth|client|app|deploy|bot|license|licence|product|session|service|root|admin)[ _-]?(?:key|token|secret)s?|tokens?|secrets?|credentials?|creds|pass|auth|login))(?![\\w-])(?![ \\t]+(?:polic(?:y|ies)|managers?|fields?|length|resets?|rules?|requirements?|hash(?:es|ing)?|prompts?|files?|stores?|vaults?|rotation|expiry|expiration|strength|complexity|format|validation|inputs?|box|forms?|change|management|generators?|less|based|budget|limits?|counts?|usage|refresh|scopes?|ids?|names?|types?|lengths|hints?|protected|authentication|handling|leak|leaks|holders?|rings?|chains?|pairs?|space|board|words?|frames?|points?|findings?|question|headers?|fingerprints?|flow|page|screen|endpoint|url|service|server|method|middleware|dialog)\\b)",
"flags": "i"
}
];
const NOT_A_VALUE = {"source": "^(?:[$%{<*]|(?:none|null|nil|true|false|undefined|required|optional|str|string|bytes|int|secretstr|env|os\\.environ.*|process\\.env.*|xx+|\\.\\.\\.+|-+)$|[A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)+$|.*[(\\[]|[a-z_]*(?:password|passwd|secret|token|key)[a-z_]*$)", "flags": "i"};
// END secret detectors

const MARKER_RE = /\[REDACTED:[a-z0-9_]+\]/g;
const CODE_KINDS = new Set(["secret_assignment", "cli_secret_flag"]);
let compiled = null;

function detectors() {
  if (!compiled) {
    compiled = {
      list: SECRET_DETECTORS.map((d) => ({ kind: d.kind, re: new RegExp(d.source, `${d.flags}gd`) })),
      notValue: new RegExp(NOT_A_VALUE.source, NOT_A_VALUE.flags),
    };
  }
  return compiled;
}

function findSecrets(text) {
  const { list, notValue } = detectors();
  const markers = [...text.matchAll(MARKER_RE)].map((m) => [m.index, m.index + m[0].length]);
  const hits = [];
  list.forEach(({ kind, re }, priority) => {
    for (const m of text.matchAll(re)) {
      let start = m.index;
      let end = m.index + m[0].length;
      if (m.indices?.groups?.secret) {
        if (CODE_KINDS.has(kind) && notValue.test(m.groups.secret)) continue;
        [start, end] = m.indices.groups.secret;
      } else if (m.groups && "secret" in m.groups) {
        continue; // the optional group did not take part
      }
      if (end <= start || markers.some(([a, b]) => start < b && a < end)) continue;
      hits.push([start, end, priority]);
    }
  });
  hits.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
  const merged = [];
  for (const [start, end, priority] of hits) {
    const last = merged.at(-1);
    if (last && start < last[1]) {
      last[1] = Math.max(last[1], end);
      last[2] = Math.min(last[2], priority);
    } else merged.push([start, end, priority]);
  }
  return merged.map(([start, end, p]) => ({ kind: list[p].kind, start, end }));
}

/** `text` with every secret replaced by [REDACTED:<kind>], as engine.redact.redact does. */
function redactSecrets(text) {
  if (typeof text !== "string" || !text) return text;
  for (let round = 0; round < 10; round++) {
    const hits = findSecrets(text);
    if (!hits.length) break;
    let out = "";
    let cursor = 0;
    for (const h of hits) {
      out += text.slice(cursor, h.start) + `[REDACTED:${h.kind}]`;
      cursor = h.end;
    }
    text = out + text.slice(cursor);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// outbox: append the request first, send, then acknowledge. Append-only lines
// ({"id", "method", "route", "body"} and {"ack": id}); compaction renames the file away and
// re-appends what is still pending, so concurrent opencode processes never lose a line.

class Outbox {
  constructor(dir, project, log) {
    this.dir = dir;
    this.file = path.join(dir, `${sha(project, 16)}.jsonl`);
    this.log = log;
  }

  append(entry) {
    ensureDir(this.dir);
    fs.appendFileSync(this.file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  ack(id) {
    try {
      fs.appendFileSync(this.file, `${JSON.stringify({ ack: id })}\n`, { mode: 0o600 });
    } catch (err) {
      this.log.error("outbox ack failed", { error: String(err) });
    }
  }

  static parse(text) {
    const entries = new Map();
    const acks = new Set();
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const obj = JSON.parse(line);
        if (obj.ack) acks.add(obj.ack);
        else if (obj.id) entries.set(obj.id, obj);
      } catch {
        // a torn last line from a killed process: skip it
      }
    }
    return [...entries.values()].filter((e) => !acks.has(e.id));
  }

  pending() {
    try {
      return Outbox.parse(fs.readFileSync(this.file, "utf8"));
    } catch {
      return [];
    }
  }

  compact() {
    const tmp = `${this.file}.${process.pid}.${randomUUID().slice(0, 8)}`;
    try {
      fs.renameSync(this.file, tmp);
    } catch {
      return; // nothing to compact
    }
    try {
      const left = Outbox.parse(fs.readFileSync(tmp, "utf8"));
      for (const e of left) this.append(e);
      fs.unlinkSync(tmp);
    } catch (err) {
      this.log.error("outbox compaction failed", { error: String(err) });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// turn capture

function textOfParts(parts) {
  return (parts || [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n")
    .trim();
}

/** The last finished user+assistant pair of a session's message list ({info, parts}[]). */
function lastTurn(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.info?.role !== "assistant") continue;
    const answer = textOfParts(m.parts);
    // the answer of a turn is spread over its steps: gather the assistant texts after the user message
    let j = i;
    while (j >= 0 && messages[j]?.info?.role !== "user") j--;
    if (j < 0) return null;
    const user = messages[j];
    const answers = messages
      .slice(j + 1, i + 1)
      .filter((x) => x?.info?.role === "assistant")
      .map((x) => textOfParts(x.parts))
      .filter(Boolean);
    return {
      userId: user.info.id,
      assistantId: m.info.id,
      user: textOfParts(user.parts),
      assistant: answers.join("\n\n") || answer,
      ts: m.info.time?.completed ?? m.info.time?.created ?? Date.now(),
    };
  }
  return null;
}

function formatMemories(result) {
  const lines = (result?.memories || []).map(
    (m) => `[${m.id}] ${m.text} (score ${Number(m.score ?? 0).toFixed(2)}, ${m.state}, ${m.scope}, ${m.kind})`,
  );
  for (const c of result?.conflicts || []) lines.push(`conflict: ${typeof c === "string" ? c : JSON.stringify(c)}`);
  return lines.length ? lines.join("\n") : "No memory matches.";
}

function formatUnits(result) {
  const rows = Array.isArray(result)
    ? result
    : result?.units || result?.results || result?.hits || result?.turns || result?.items || null;
  if (!Array.isArray(rows)) return JSON.stringify(result, null, 2);
  if (!rows.length) return "No turns found.";
  return rows
    .map((u) => {
      const head = `[${u.unit_id ?? u.id ?? "?"}] turn ${u.turn ?? "?"}${u.session ? ` (session ${u.session})` : ""}${u.ts ? ` ${u.ts}` : ""}`;
      const body = u.snippet ?? [u.user && `user: ${u.user}`, u.assistant && `assistant: ${u.assistant}`].filter(Boolean).join("\n");
      return `${head}\n${body}`;
    })
    .join("\n\n");
}

// ---------------------------------------------------------------------------------------------
// project identity: the repository, the same from every subfolder and checkout (bridge/project.py)

function repositoryRoot(start) {
  let folder = path.resolve(start);
  for (;;) {
    const dotGit = path.join(folder, ".git");
    let stat = null;
    try {
      stat = fs.statSync(dotGit);
    } catch {
      stat = null;
    }
    if (stat?.isDirectory()) return folder;
    if (stat?.isFile()) {
      try {
        const line = fs.readFileSync(dotGit, "utf8").trim();
        if (!line.startsWith("gitdir:")) return folder;
        const gitdir = path.resolve(folder, line.slice("gitdir:".length).trim());
        const common = path.resolve(gitdir, fs.readFileSync(path.join(gitdir, "commondir"), "utf8").trim());
        return path.basename(common) === ".git" ? path.dirname(common) : folder;
      } catch {
        return folder; // a submodule, or a worktree whose main checkout is gone
      }
    }
    const parent = path.dirname(folder);
    if (parent === folder) return path.resolve(start);
    folder = parent;
  }
}

// ---------------------------------------------------------------------------------------------
// the plugin

// One registration per opencode process and directory, across every copy of this file (a
// project install and a global install are two modules): the copy loaded first serves.
const registry = (globalThis[REGISTRY] ??= new Map());

export const DynmemPlugin = async (input = {}, options = {}) => {
  const settings = { ...settingsFrom(process.env), ...(options && typeof options === "object" ? options : {}) };
  const log = new Log(path.join(settings.dataDir, "logs", "opencode-plugin.log"), settings.debug);
  const worktree = input.worktree && input.worktree !== "/" ? input.worktree : "";
  const project = settings.project || repositoryRoot(worktree || input.directory || process.cwd());
  const slot = `${input.directory || ""}\u0000${project}`;
  const here = import.meta.url;
  if (settings.disabled || registry.has(slot)) {
    log.info("plugin not loaded", { disabled: settings.disabled, served_by: registry.get(slot), copy: here });
    return {};
  }
  registry.set(slot, here);
  const sidecar = new Sidecar(settings, log);
  const outbox = new Outbox(path.join(settings.dataDir, "outbox"), project, log);
  const client = input.client;

  const inflight = new Set();
  const sending = new Set(); // outbox ids this process is sending right now
  const sessions = new Map(); // sessionID -> {userText, query, recall, retrievalId, fedBack, observed}
  const messages = new Map(); // messageID -> {sessionID, role, parentID, parts: Map}

  function track(promise) {
    const p = Promise.resolve(promise).catch((err) => log.error("background task failed", { error: String(err) }));
    inflight.add(p);
    p.finally(() => inflight.delete(p));
    return p;
  }

  function session(id) {
    let s = sessions.get(id);
    if (!s) {
      s = { userText: "", query: "", recall: null, retrievalId: "", abstained: true, fedBack: new Set(), observed: new Set() };
      sessions.set(id, s);
    }
    return s;
  }

  /** Send one outbox entry; true once the sidecar has it (or refused it for good). */
  async function send(entry) {
    if (sending.has(entry.id)) return false;
    sending.add(entry.id);
    try {
      await sidecar.request(entry.method, entry.route, entry.body);
      outbox.ack(entry.id);
      return true;
    } catch (err) {
      if (err instanceof SidecarError && !err.retry) {
        log.error("sidecar refused an outbox entry; dropping it", { route: entry.route, status: err.status, code: err.code });
        outbox.ack(entry.id);
        return true;
      }
      log.info("outbox entry kept for later", { route: entry.route, error: String(err?.message || err) });
      return false;
    } finally {
      sending.delete(entry.id);
    }
  }

  /** Persist first (redacted), then send; the entry stays in the outbox until the sidecar acknowledges it. */
  function deliver(route, raw) {
    const body = { ...raw };
    for (const field of ["user", "assistant", "answer"]) if (typeof body[field] === "string") body[field] = redactSecrets(body[field]);
    const entry = { id: body.request_id, method: "POST", route, body, ts: Date.now() };
    outbox.append(entry);
    return track(
      send(entry).then((ok) => {
        outbox.compact();
        return ok;
      }),
    );
  }

  async function replay() {
    const entries = outbox.pending().filter((e) => !sending.has(e.id));
    if (!entries.length) return;
    log.info("replaying the outbox", { entries: entries.length });
    for (const e of entries) if (!(await send(e))) break; // the sidecar is down: try again later
    outbox.compact();
  }

  async function fetchTurn(sessionID) {
    if (client?.session?.messages) {
      try {
        const res = await within(client.session.messages({ path: { id: sessionID } }), 3_000, null);
        if (res === null) throw new Error("timeout");
        const list = Array.isArray(res) ? res : res?.data;
        if (Array.isArray(list)) {
          const turn = lastTurn(list);
          if (turn) return turn;
        }
      } catch (err) {
        log.info("session.messages failed; using captured events", { error: String(err) });
      }
    }
    // fall back to what the event stream showed us
    const list = [...messages.entries()]
      .filter(([, m]) => m.sessionID === sessionID)
      .map(([id, m]) => ({ info: { id, role: m.role, time: m.time }, parts: [...m.parts.values()] }));
    return lastTurn(list);
  }

  async function onIdle(sessionID) {
    const s = session(sessionID);
    const turn = await fetchTurn(sessionID);
    if (!turn || !turn.user || s.observed.has(turn.assistantId)) return;
    s.observed.add(turn.assistantId);
    const ts = new Date(typeof turn.ts === "number" ? turn.ts : Date.parse(turn.ts) || Date.now()).toISOString();
    const observe = deliver("/v1/observe", {
      project,
      session: sessionID,
      user: turn.user,
      assistant: turn.assistant,
      ts,
      request_id: `oc-${sha(`${sessionID}:${turn.assistantId}`)}`,
    });
    if (s.retrievalId && !s.abstained && !s.fedBack.has(s.retrievalId)) {
      s.fedBack.add(s.retrievalId);
      deliver("/v1/feedback", {
        project,
        retrieval_id: s.retrievalId,
        answer: turn.assistant,
        request_id: `fb-${sha(`${s.retrievalId}:${turn.assistantId}`)}`,
      });
    }
    for (const [id, m] of messages) if (m.sessionID === sessionID) messages.delete(id);
    if (await observe) await replay(); // the sidecar is up: send what earlier failures left behind
    else noticeOff(sessionID);
  }

  async function recallFor(sessionID, query) {
    const s = session(sessionID);
    if (s.recall && s.query === query) return s.recall; // every step of a turn shares one recall
    const body = { project, query };
    if (settings.budgetTokens) body.budget_tokens = settings.budgetTokens;
    const result = await sidecar.request("POST", "/v1/recall", body, settings.recallTimeoutMs);
    s.query = query;
    s.recall = result;
    s.retrievalId = result?.retrieval_id || "";
    s.abstained = Boolean(result?.abstained) || !result?.context;
    return result;
  }

  function miss(query, tool, sessionID) {
    track(sidecar.request("POST", "/v1/miss", { project, query: query || tool, tool, session: sessionID }).catch((err) =>
      log.info("miss not recorded", { error: String(err?.message || err) }),
    ));
  }

  async function toolCall(name, fn) {
    try {
      return await fn();
    } catch (err) {
      log.error("tool failed", { tool: name, error: String(err?.message || err) });
      const hint = sidecar.down ? " Start it with `dynmem serve --detach`; `dynmem doctor` checks the setup." : "";
      return `dynmem: ${name} failed: ${err?.message || err}.${hint}`;
    }
  }

  const pid = (id) => encodeURIComponent(String(id ?? ""));
  const q = () => `project=${encodeURIComponent(project)}`;

  // Notices: one line when memory comes on (which data dir), one per session when it is off
  // (and why). A toast in the TUI; on stderr too under `opencode run`, where nothing else shows.
  const toldOff = new Set();
  let toldOn = false;
  const runMode = process.argv.slice(1).includes("run");

  async function notify(message, variant) {
    log.info("notice", { message });
    if (runMode) {
      try {
        process.stderr.write(`${message}\n`);
      } catch {
        // a closed stderr must not break opencode
      }
    }
    try {
      if (client?.tui?.showToast) await within(client.tui.showToast({ body: { message, variant } }), 1_000, null);
    } catch {
      // no TUI (opencode run): the stderr line and the log are enough
    }
  }

  function noticeOn(conn) {
    if (toldOn || !conn) return;
    toldOn = true;
    track(notify(`dynmem: memory on (data dir ${conn.dataDir || settings.dataDir}, sidecar pid ${conn.pid ?? "?"}; it stops itself when idle, \`dynmem stop\` stops it now)`, "info"));
  }

  function noticeOff(sessionID) {
    const key = sessionID || "-";
    if (toldOff.has(key) || !sidecar.down) return;
    toldOff.add(key);
    track(notify(`dynmem: memory is off: ${sidecar.down}`, "warning"));
  }

  // first contact: find or start the sidecar, then send what earlier runs left behind
  track(sidecar.connect().then((conn) => {
    noticeOn(conn);
    return conn && replay();
  }));
  log.info("plugin loaded", { project, copy: here, tools: settings.tools });
  log.debug("plugin input", { keys: Object.keys(input || {}), directory: input.directory, worktree: input.worktree });

  // The tool definitions travel with every model request: a short default set. `memory_search`
  // answers from memory and, when memory has nothing, from the raw log (recording a miss for
  // repair); `memory_forget` retracts. DYNMEM_TOOLS=all adds why/remember and the three log
  // tools; DYNMEM_TOOLS=none offers none (passive injection only).
  function tools() {
    if (settings.tools === "none") return {};
    const str = { type: "string" };
    const memorySearch = {
      description: "Search project memory and past turns.",
      args: { query: str },
      execute: (args, ctx) =>
        toolCall("memory_search", async () => {
          const query = String(args?.query ?? "");
          const found = await sidecar.request("POST", "/v1/recall", { project, query, k: 8, passive: true });
          if (found?.memories?.length || settings.tools === "all") return formatMemories(found);
          miss(query, "memory_search", ctx?.sessionID);
          const turns = formatUnits(await sidecar.request("POST", "/v1/log/search", { project, query, limit: 5 }));
          return `No memory matches. Past turns:\n${turns}`;
        }),
    };
    const memoryForget = {
      description: "Retract a memory by id.",
      args: { id: str },
      execute: (args) =>
        toolCall("memory_forget", async () => {
          const res = await sidecar.request("DELETE", `/v1/memories/${pid(args?.id)}?${q()}`);
          return `Forgot memory ${args?.id}.${res ? ` ${JSON.stringify(res)}` : ""}`;
        }),
    };
    if (settings.tools !== "all") return { memory_search: memorySearch, memory_forget: memoryForget };
    return {
      memory_search: memorySearch,
      memory_forget: memoryForget,
      memory_why: {
        description: "Explain a memory: where it came from, its evidence and history.",
        args: { id: { type: "string", description: "memory id, as shown by memory_search" } },
        execute: (args) =>
          toolCall("memory_why", async () =>
            JSON.stringify(await sidecar.request("GET", `/v1/memories/${pid(args?.id)}/why?${q()}`), null, 2),
          ),
      },
      memory_remember: {
        description: "Store a fact, decision or preference in the long-term project memory.",
        args: { text: { type: "string", description: "one self-contained sentence" } },
        execute: (args) =>
          toolCall("memory_remember", async () => {
            const res = await sidecar.request("POST", "/v1/memories", { project, text: String(args?.text ?? "") });
            const id = res?.memory_ids?.[0] ?? res?.id ?? res?.memory?.id ?? res?.memory_id;
            return id ? `Remembered as ${id}.` : `Remembered. ${JSON.stringify(res)}`;
          }),
      },
      log_search: {
        description: "Full-text search of the raw log of earlier turns in this project (use when memory has no answer).",
        args: { query: { type: "string", description: "words to look for" } },
        execute: (args, ctx) =>
          toolCall("log_search", async () => {
            const query = String(args?.query ?? "");
            miss(query, "log_search", ctx?.sessionID);
            return formatUnits(await sidecar.request("POST", "/v1/log/search", { project, query, limit: 10 }));
          }),
      },
      log_timeline: {
        description: "List earlier turns of this project in order, optionally around a turn number.",
        args: { around_turn: { type: ["integer", "null"], description: "turn number to center on; null for the latest turns" } },
        execute: (args, ctx) =>
          toolCall("log_timeline", async () => {
            const body = { project, limit: 20 };
            if (args?.around_turn !== undefined && args?.around_turn !== null) body.around_turn = Number(args.around_turn);
            miss(sessions.get(ctx?.sessionID)?.userText || "log_timeline", "log_timeline", ctx?.sessionID);
            return formatUnits(await sidecar.request("POST", "/v1/log/timeline", body));
          }),
      },
      log_window: {
        description: "Show the turns around one logged turn (by unit id).",
        args: {
          unit_id: { type: "string", description: "unit id, as shown by log_search" },
          radius: { type: ["integer", "null"], description: "turns on each side; null for the default" },
        },
        execute: (args, ctx) =>
          toolCall("log_window", async () => {
            const body = { project, unit_id: String(args?.unit_id ?? "") };
            if (args?.radius !== undefined && args?.radius !== null) body.radius = Number(args.radius);
            miss(sessions.get(ctx?.sessionID)?.userText || "log_window", "log_window", ctx?.sessionID);
            return formatUnits(await sidecar.request("POST", "/v1/log/window", body));
          }),
      },
    };
  }

  return {
    "chat.message": async (hookInput, output) => {
      try {
        log.debug("chat.message", { sessionID: hookInput?.sessionID, parts: output?.parts?.length });
        const text = textOfParts(output?.parts);
        if (text && hookInput?.sessionID) session(hookInput.sessionID).userText = text;
      } catch (err) {
        log.error("chat.message failed", { error: String(err) });
      }
    },

    "experimental.chat.system.transform": async (hookInput, output) => {
      try {
        log.debug("system.transform", { sessionID: hookInput?.sessionID, entries: output?.system?.length });
        const system = output?.system;
        if (!Array.isArray(system)) return;
        if (typeof system[0] === "string" && system[0].startsWith(TITLE_PREFIX)) return;
        const sessionID = hookInput?.sessionID;
        const query = sessionID ? sessions.get(sessionID)?.userText : "";
        if (!query) return;
        const result = await recallFor(sessionID, query);
        noticeOn(sidecar.conn);
        if (result?.context) system.push(result.context);
      } catch (err) {
        log.error("recall failed; no memory injected", { error: String(err?.message || err) });
        noticeOff(hookInput?.sessionID);
      }
    },

    event: async ({ event } = {}) => {
      try {
        if (!/^(plugin|catalog|integration|reference|message\.part\.delta)/.test(event?.type || "")) log.debug("event", { type: event?.type });
        const props = event?.properties || {};
        if (event?.type === "message.updated" && props.info?.id) {
          const m = messages.get(props.info.id) || { parts: new Map() };
          Object.assign(m, { sessionID: props.info.sessionID, role: props.info.role, time: props.info.time });
          messages.set(props.info.id, m);
        } else if (event?.type === "message.part.updated" && props.part?.messageID && props.part.type === "text") {
          const m = messages.get(props.part.messageID) || { parts: new Map(), sessionID: props.part.sessionID };
          m.parts.set(props.part.id, props.part);
          messages.set(props.part.messageID, m);
        } else if (
          (event?.type === "session.idle" && props.sessionID) ||
          (event?.type === "session.status" && props.status?.type === "idle" && props.sessionID)
        ) {
          track(onIdle(props.sessionID));
        }
      } catch (err) {
        log.error("event handler failed", { type: event?.type, error: String(err) });
      }
    },

    tool: tools(),

    dispose: async () => {
      try {
        // idle handlers may still be fetching the turn: wait for them and everything they started
        const deadline = Date.now() + settings.disposeTimeoutMs;
        while (inflight.size && Date.now() < deadline) {
          await within(Promise.allSettled([...inflight]), Math.max(0, deadline - Date.now()));
        }
        if (inflight.size) log.error("dispose timed out; pending turns stay in the outbox", { inflight: inflight.size });
      } catch (err) {
        log.error("dispose failed", { error: String(err) });
      } finally {
        if (registry.get(slot) === here) registry.delete(slot);
      }
    },
  };
};

// for tests (tests/bridge/test_plugin_redact.py); a property, not an export: opencode calls every export
DynmemPlugin.redactSecrets = redactSecrets;

export default DynmemPlugin;
