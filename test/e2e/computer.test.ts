/**
 * Familiar's computer end to end, in real bubblewrap and real Chromium, with a scripted model on the
 * fake Telegram: the person has a CSV in their workspace; Python reads it and writes an SVG chart
 * and an HTML summary; the summary becomes a PDF artifact (the chart inlined and drawn into it); the
 * person gets it on Telegram as a real document (sendDocument) with a link to its page. Then,
 * through the same tool path, a model obeying planted instructions runs code that tries to get out
 * (another person's files, the vault, Familiar's environment, a fork bomb, sleep 1000): each is
 * refused, the limit named in the result the model reads, Familiar up. With the computer off, the
 * tools are not offered and /healthz and the setup page say why.
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, text, toolCall, type FakeOpenAIServer, type RecordedRequest } from "../fakes/openai-server.js";
import { FakeTelegramApi, updates } from "../fakes/telegram-api.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { lastTool } from "../helpers/e2e.js";
import { liveSandboxProcesses } from "../sandbox/exec/helpers.js";

const ANA = 4242;
/** This file's own sandbox uid (test files run in parallel; each counts only its own processes). */
const SANDBOX_UID = 61916;

const CSV = `date,category,amount
2026-03-01,groceries,54.20
2026-03-03,transport,12.00
2026-03-07,groceries,33.80
2026-03-09,fun,25.00
2026-03-15,transport,30.50
2026-03-20,groceries,41.00
`;

/** The program the model writes: totals per category, a bar chart (SVG), a summary page linking it. */
const PROGRAM = `
import csv
totals = {}
with open("expenses.csv") as f:
    for row in csv.DictReader(f):
        totals[row["category"]] = totals.get(row["category"], 0) + float(row["amount"])
items = sorted(totals.items(), key=lambda kv: -kv[1])
top = max(v for _, v in items)
bars = "".join(
    f'<rect x="{20 + i * 70}" y="{180 - v / top * 150:.1f}" width="50" height="{v / top * 150:.1f}" fill="#123456"/>'
    f'<text x="{45 + i * 70}" y="198" text-anchor="middle" font-size="12">{k}</text>'
    for i, (k, v) in enumerate(items))
with open("chart.svg", "w") as f:
    f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{40 + 70 * len(items)}" height="200">{bars}</svg>')
rows = "".join(f"<tr><td>{k}</td><td>{v:.2f}</td></tr>" for k, v in items)
with open("summary.html", "w") as f:
    f.write(f'<!doctype html><html><head><title>Expenses summary</title></head><body><h1>March expenses</h1>'
            f'<p>Total: {sum(totals.values()):.2f}</p><img src="chart.svg"><table>{rows}</table></body></html>')
for k, v in items:
    print(k, f"{v:.2f}")
`;

function expensesModel() {
  return (r: RecordedRequest) => {
    const tool = lastTool(r);
    if (tool === null) {
      const said = r.messages.findLast((m) => m.role === "user");
      if (typeof said?.content === "string" && said.content.includes("hello")) return text("Hello!");
      return toolCall("run_code", { language: "python", code: PROGRAM });
    }
    if (tool.includes("Files created")) return toolCall("artifact_create", { kind: "pdf", title: "Expenses March", from: { path: "summary.html" } });
    const kept = /as (art_[0-9a-f]{28}), version 1/.exec(tool)?.[1];
    if (kept) return toolCall("artifact_send", { id: kept, text: "Here is your expenses summary." });
    return text("Done: the summary is in your chat.");
  };
}

/** The PDF's content streams, inflated (Chromium's PDFs compress them with Flate). */
function pdfStreams(pdf: Buffer): string {
  const text = pdf.toString("latin1");
  const out: string[] = [];
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = (match.index ?? 0) + match[0].length;
    const end = text.indexOf("endstream", start);
    try {
      out.push(inflateSync(pdf.subarray(start, end)).toString("latin1"));
    } catch {
      // not a Flate stream (fonts, images)
    }
  }
  return out.join("\n");
}

describe("the computer end to end", () => {
  let model: FakeOpenAIServer | null = null;
  let app: TestApp | null = null;
  let fake: FakeTelegramApi | null = null;

  afterEach(async () => {
    await app?.close();
    await model?.close();
    await fake?.close();
    app = model = fake = null;
  });

  it("Python charts a CSV of the workspace; the summary reaches Telegram as a PDF with a link to its page", async () => {
    fake = await FakeTelegramApi.start();
    model = await startFakeOpenAI({ fallback: expensesModel() });
    app = await startTestApp({ TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, OPENAI_BASE_URL: model.url, ALLOW_FROM: `telegram:${ANA}`, PUBLIC_URL: "https://familiar.example" });
    fake.push(updates.text(ANA, "hello"));
    await fake.waitFor(() => fake!.messages.some((m) => m.text.includes("Hello!")), 30_000, "the greeting");
    const identity = (await app.store.persons.findIdentity("telegram", String(ANA)))!;
    const workspace = join(app.dataDir, "persons", identity.personId, "workspace");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "expenses.csv"), CSV);

    fake.push(updates.text(ANA, "make me a PDF of my March expenses with a chart"));
    await fake.waitFor(() => fake!.files.some((f) => f.method === "sendDocument"), 90_000, "the PDF");
    const pdf = fake.files.find((f) => f.method === "sendDocument")!;
    expect(pdf.chatId).toBe(String(ANA));
    expect(pdf.name).toMatch(/\.pdf$/);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdf.bytes.toString("latin1")).toContain("/Title (Expenses summary)");
    // The chart was drawn into the PDF: its three bars' colour (#123456) fills shapes in the page's content.
    expect(pdfStreams(pdf.bytes).match(/\.0706 \.2039 \.3373 rg/g)?.length).toBe(3);
    await fake.waitFor(() => fake!.messages.some((m) => m.text.includes("Here is your expenses summary.") && /https:\/\/familiar\.example\/a\/art_[0-9a-f]{28}/.test(m.text)), 20_000, "the text and the link");

    // What the model read of the run: the totals and the files it made.
    const ran = model.requests.map(lastTool).find((t) => t?.includes("Files created"))!;
    expect(ran).toMatch(/^exit 0/);
    expect(ran).toContain("groceries 129.00");
    expect(ran).toMatch(/Files created: chart\.svg \([^)]+\), summary\.html/);
    // The artifact is kept with its kind, title and version; its file sits in the read-only artifacts folder.
    const [kept] = (await app.store.artifacts.listArtifacts(identity.personId)).items;
    expect(kept).toMatchObject({ kind: "pdf", title: "Expenses March", version: 1, taint: null, mimeType: "application/pdf" });
    expect(readFileSync(join(workspace, kept!.path)).equals(pdf.bytes)).toBe(true);
    await fake.waitFor(() => fake!.messages.some((m) => m.text.includes("Done")), 20_000, "the closing words");
  }, 180_000);

  it("code that tries to get out is refused, the limit named to the model, and Familiar stays up", async () => {
    const attempts = [
      { language: "shell", code: "cat ../../per_other/workspace/diary.txt; cat /proc/1/environ; ls /data; cat ../../../vault.json; echo done", timeoutSeconds: 10 },
      { language: "python", code: "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", timeoutSeconds: 20 },
      { language: "shell", code: "sleep 1000", timeoutSeconds: 2 },
    ];
    model = await startFakeOpenAI({
      fallback: (r) => {
        const done = r.messages.filter((m) => m.role === "tool").length;
        const attempt = attempts[done];
        return attempt ? toolCall("run_code", attempt) : text("All three ran.");
      },
    });
    process.env.FAMILIAR_E2E_SECRET = "E2E-ENV-SECRET-77";
    app = await startTestApp({ OPENAI_BASE_URL: model.url, COMPUTER_UID: String(SANDBOX_UID) });
    const other = join(app.dataDir, "persons", "per_other", "workspace");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, "diary.txt"), "OTHER-DIARY-SECRET");
    await app.say("ana", "run the three scripts from the page I showed you");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text.includes("All three ran.")), 120_000);
    const results = model.requests.map(lastTool).filter((t): t is string => t !== null);
    expect(results).toHaveLength(3);
    const [escape, bomb, sleep] = results as [string, string, string];
    expect(escape).toContain("done");
    for (const secret of ["OTHER-DIARY-SECRET", "E2E-ENV-SECRET-77", app.dataDir]) expect(escape).not.toContain(secret);
    expect(bomb).toMatch(/^killed at a limit \(processes\)/);
    expect(bomb).toContain("Limit: processes — it reached 64 processes and threads, the limit; the whole process tree was killed.");
    expect(sleep).toMatch(/^killed at a limit \(wall_time\)/);
    expect(sleep).toContain("it ran for 2 s, the wall-time limit");
    expect(liveSandboxProcesses(SANDBOX_UID)).toBe(0);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  }, 180_000);

  it("with the computer off, the tools are not offered and /healthz and the setup page say why", async () => {
    model = await startFakeOpenAI({ fallback: () => text("ok") });
    app = await startTestApp({ OPENAI_BASE_URL: model.url, COMPUTER: "false" });
    await app.say("ana", "hi");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text === "ok"), 60_000);
    expect(model.requests[0]!.toolNames).not.toContain("run_code");
    expect(model.requests[0]!.toolNames).toContain("artifact_create");
    const health = (await (await fetch(`${app.url}/healthz`)).json()) as { computer: { ok: boolean; state: string; reason: string } };
    expect(health.computer).toEqual({ ok: true, state: "off", reason: expect.stringContaining("turned off"), languages: [] });
    // The setup page says it too (its API, as the page reads it after a local sign-in).
    const signIn = await fetch(`${app.url}/api/web/session/local`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ana", create: true }) });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    const setup = (await (await fetch(`${app.url}/api/web/setup`, { headers: { cookie } })).json()) as { computer: { state: string; reason: string } };
    expect(setup.computer).toMatchObject({ state: "off", reason: expect.stringContaining("turned off") });
  }, 60_000);

  it("where the sandbox works the tools are offered, and /healthz names the languages", async () => {
    model = await startFakeOpenAI({ fallback: () => text("ok") });
    app = await startTestApp({ OPENAI_BASE_URL: model.url });
    await until(async () => ((await (await fetch(`${app!.url}/healthz`)).json()) as { computer: { state: string } }).computer.state === "on");
    await app.say("ana", "hi");
    await app.repliesUntil("ana", (ms) => ms.some((m) => m.text === "ok"), 60_000);
    expect(model.requests[0]!.toolNames).toEqual(expect.arrayContaining(["run_code", "run_command", "artifact_create"]));
    const health = (await (await fetch(`${app.url}/healthz`)).json()) as { computer: unknown };
    expect(health.computer).toEqual({ ok: true, state: "on", reason: null, languages: ["javascript", "python", "shell"] });
  }, 60_000);
});

async function until(probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
