/**
 * A real Radicale (Debian's `radicale` 3.1, installed by `.ci/run`) for calendar tests: its own temp
 * config and storage, a test account in a plain htpasswd file (Radicale 3.1 checks `plain`, `md5`
 * and — only with passlib's bcrypt backend, which Debian does not pull in — `bcrypt`), listening on
 * a free loopback port it picks itself (`127.0.0.1:0`, read back from its log).
 *
 * The process gets SIGTERM when the test process dies (`setpriv --pdeathsig`), and `stop()` ends it
 * and deletes its files. Helpers write calendars and events with plain HTTP, as another client would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running Radicale with one account. */
export interface RadicaleServer {
  /** Base URL, e.g. `http://127.0.0.1:40123/` (discovery starts here). */
  url: string;
  /** The account's calendar home, e.g. `http://127.0.0.1:40123/test/`. */
  home: string;
  user: string;
  password: string;
  /** Where Radicale keeps its collections (tests may remove the sync-token cache there). */
  storage: string;
  /** Creates a calendar collection (MKCALENDAR) and returns its URL. */
  makeCalendar(slug: string, displayName: string): Promise<string>;
  /** PUTs an object into a calendar; returns its URL. */
  put(calendarUrl: string, name: string, ics: string): Promise<string>;
  /** DELETEs an object. */
  remove(objectUrl: string): Promise<void>;
  /** GETs an object's text (null when it is gone). */
  get(objectUrl: string): Promise<string | null>;
  /** Every object URL in a calendar. */
  list(calendarUrl: string): Promise<string[]>;
  /** Requests Radicale answered, as `METHOD path`, since start or the last `clearRequests()`. */
  requests(): string[];
  clearRequests(): void;
  /** Radicale's log so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts Radicale; rejects (after cleaning up) when it does not come up within `timeoutMs`.
 * `inMemory`: keep its storage on tmpfs (`/dev/shm`, when there is one). Radicale fsyncs every item
 * and cache file it writes and has no public setting against it (`_filesystem_fsync` is privileged),
 * so a bench that loads thousands of items measures the disk unless the folder is in memory.
 */
export async function startRadicale(options: { user?: string; password?: string; timeoutMs?: number; inMemory?: boolean } = {}): Promise<RadicaleServer> {
  const user = options.user ?? "test";
  const password = options.password ?? "app-password-1";
  const dir = mkdtempSync(join(options.inMemory && existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "familiar-radicale-"));
  const storage = join(dir, "collections");
  writeFileSync(join(dir, "users"), `${user}:${password}\n`);
  writeFileSync(
    join(dir, "config"),
    [
      "[server]",
      "hosts = 127.0.0.1:0",
      "[auth]",
      "type = htpasswd",
      `htpasswd_filename = ${join(dir, "users")}`,
      "htpasswd_encryption = plain",
      "delay = 0",
      "[storage]",
      `filesystem_folder = ${storage}`,
      "[rights]",
      "type = owner_only",
      "[web]",
      "type = none",
      "[logging]",
      "level = info",
      "mask_passwords = True",
      "",
    ].join("\n"),
  );
  const binary = existsSync("/usr/bin/radicale") ? "/usr/bin/radicale" : "radicale";
  const child = spawn("setpriv", ["--pdeathsig", "TERM", binary, "--config", join(dir, "config")], { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } });
  const log: string[] = [];
  const requests: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Radicale did not start in ${options.timeoutMs ?? 15_000} ms:\n${log.join("")}`)), options.timeoutMs ?? 15_000);
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log.push(text);
      for (const m of text.matchAll(/(?:^|\] )(GET|PUT|DELETE|PROPFIND|REPORT|MKCALENDAR|OPTIONS|MKCOL|PROPPATCH) request for '([^']*)'/gm)) requests.push(`${m[1]} ${m[2]}`);
      const listening = /Listening on '?\[?127\.0\.0\.1\]?:(\d+)'?/.exec(text);
      if (listening) {
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Radicale exited with ${code}:\n${log.join("")}`));
    });
  }).catch(async (error: unknown) => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const url = `http://127.0.0.1:${port}/`;
  const home = `${url}${user}/`;
  const auth = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const call = async (target: string, init: RequestInit & { expect?: number[] } = {}): Promise<Response> => {
    const response = await fetch(target, { ...init, headers: { authorization: auth, ...(init.headers as Record<string, string> | undefined) } });
    if (init.expect && !init.expect.includes(response.status)) throw new Error(`${init.method ?? "GET"} ${target} answered ${response.status}: ${await response.text()}`);
    return response;
  };
  // The principal's home collection exists once the user has made a request.
  await call(home, { method: "PROPFIND", headers: { depth: "0" }, expect: [207] });
  return {
    url,
    home,
    user,
    password,
    storage,
    async makeCalendar(slug, displayName) {
      const target = `${home}${slug}/`;
      const body = `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${displayName}</D:displayname><C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`;
      await call(target, { method: "MKCALENDAR", body, headers: { "content-type": "application/xml" }, expect: [201] });
      return target;
    },
    async put(calendarUrl, name, ics) {
      const target = new URL(name, calendarUrl).href;
      await call(target, { method: "PUT", body: ics, headers: { "content-type": "text/calendar; charset=utf-8" }, expect: [201, 204] });
      return target;
    },
    async remove(objectUrl) {
      await call(objectUrl, { method: "DELETE", expect: [200, 204] });
    },
    async get(objectUrl) {
      const response = await call(objectUrl);
      return response.status === 404 ? null : response.text();
    },
    async list(calendarUrl) {
      const response = await call(calendarUrl, { method: "PROPFIND", headers: { depth: "1" }, body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>', expect: [207] });
      const text = await response.text();
      return [...text.matchAll(/<(?:\w+:)?href>([^<]+\.ics)<\/(?:\w+:)?href>/gi)].map((m) => new URL(m[1]!, url).href);
    },
    requests: () => [...requests],
    log: () => log.join(""),
    clearRequests: () => {
      requests.length = 0;
    },
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
