/**
 * The browser runtime: a login survives a restart of Familiar (a new runtime on the same DATA_DIR)
 * and a crash of the browser process; contexts close when idle and reopen on demand; at most
 * `maxContexts` are open at once; each person's profile is their own.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PersonId } from "../../../core/ids.js";
import { waitFor } from "../../helpers/wait.js";
import { browserRig, type BrowserRig } from "./helpers.js";
import { TestSite } from "./pages.js";

describe("browser runtime: persistent per-person profiles, idle close, limits, crash recovery", () => {
  let site: TestSite;
  let rig: BrowserRig;

  beforeAll(async () => {
    site = await TestSite.start();
    site
      .page("/login", `<form method="post" action="/session"><label>User <input name="user"></label><button>Sign in</button></form>`)
      .route("POST /session", (_req, body, res) => {
        const user = new URLSearchParams(body).get("user") ?? "";
        // A session cookie (no expiry): it must survive restarts all the same.
        res.writeHead(200, { "content-type": "text/html", "set-cookie": `sid=${encodeURIComponent(user)}; Path=/; HttpOnly` }).end("<p>Signed in</p>");
      })
      .route("/account", (req, _body, res) => {
        const sid = /sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
        res.writeHead(200, { "content-type": "text/html" }).end(sid ? `<h1>Welcome back ${decodeURIComponent(sid)}</h1>` : "<h1>Please sign in</h1>");
      });
    rig = await browserRig({ allowed: [site.hostPort], idleMs: 60_000 });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await site?.close();
  });

  const login = async (r: BrowserRig, personId: PersonId, user: string) => {
    await r.run("browser_open", { url: `${site.origin}/login` }, { personId });
    const page = await r.run("browser_read", {}, { personId });
    const content = page.ok ? page.content : "";
    const box = /textbox "User" \[ref=(\w+)\]/.exec(content)![1]!;
    const button = /button "Sign in" \[ref=(\w+)\]/.exec(content)![1]!;
    await r.run("browser_type", { ref: box, text: user }, { personId });
    // No Sentinel here: the tool acts as an approved submission would.
    expect((await r.run("browser_click", { ref: button }, { personId })).ok).toBe(true);
  };

  it("logs in once; the cookie survives a restart of Familiar and the profile file is private", async () => {
    await login(rig, rig.personId, "ada");
    const profile = join(rig.dataDir, "persons", rig.personId, "browser", "state.json");
    expect(statSync(profile).mode & 0o777).toBe(0o600);
    expect(readFileSync(profile, "utf8")).toContain('"sid"');
    await rig.runtime.close();

    const restarted = await browserRig({ allowed: [site.hostPort], dataDir: rig.dataDir });
    try {
      const account = await restarted.run("browser_open", { url: `${site.origin}/account` });
      expect(account.ok && account.content).toContain("Welcome back ada");
    } finally {
      await restarted.runtime.close();
      await restarted.store.close();
    }
    rig = await browserRig({ allowed: [site.hostPort], dataDir: rig.dataDir, idleMs: 60_000 });
  });

  it("recovers from a crash of the browser process without losing the profile", async () => {
    const before = await rig.run("browser_open", { url: `${site.origin}/account` });
    expect(before.ok && before.content).toContain("Welcome back ada");
    const pids = chromiumChildren();
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await waitFor(() => rig.runtime.stats.crashes === 1, "the browser's crash to be noticed");
    const after = await rig.run("browser_open", { url: `${site.origin}/account` });
    expect(after.ok && after.content).toContain("Welcome back ada");
    expect(rig.runtime.stats.crashes).toBe(1);
  });

  it("keeps persons apart, closes idle contexts, reopens on demand and bounds open contexts", async () => {
    const small = await browserRig({ allowed: [site.hostPort], idleMs: 6000, maxContexts: 2 });
    try {
      const persons: PersonId[] = [];
      for (const name of ["Bo", "Cy", "Di"]) persons.push((await small.store.persons.createPerson({ displayName: name })).id);
      await login(small, persons[0]!, "bo");
      const cy = await small.run("browser_open", { url: `${site.origin}/account` }, { personId: persons[1]! });
      expect(cy.ok && cy.content).toContain("Please sign in");
      expect(small.runtime.openContexts).toBe(2);
      // A third person: the least recently used idle context is closed to make room.
      await small.run("browser_open", { url: `${site.origin}/account` }, { personId: persons[2]! });
      expect(small.runtime.openContexts).toBe(2);
      // Idle (6 s): everything closes, then reopens with the saved login.
      const deadline = Date.now() + 40_000;
      while (small.runtime.openContexts > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(small.runtime.openContexts).toBe(0);
      const read = await small.run("browser_read", {}, { personId: persons[0]! });
      expect(read).toMatchObject({ ok: false, code: "no_page" });
      const bo = await small.run("browser_open", { url: `${site.origin}/account` }, { personId: persons[0]! });
      expect(bo.ok && bo.content).toContain("Welcome back bo");
    } finally {
      await small.close();
    }
  }, 120_000);
});

/** Chromium processes started by this test process (Playwright spawns the browser as a direct child). */
function chromiumChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (ppid === process.pid && /chrom/i.test(cmd)) out.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}
