import { mkdtempSync, rmSync } from "node:fs";
import type { GrantScope } from "../../../core/policy/index.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../../core/clock.js";
import type { PersonId } from "../../../core/ids.js";
import { EgressGuard, type Resolver } from "../../../core/egress/guard.js";
import type { Store } from "../../../core/storage/ports.js";
import { openSqliteStore } from "../../../core/storage/sqlite/index.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../../../core/tools/tool.js";
import { ArtifactShelf } from "../../../sandbox/artifacts/index.js";
import { BrowserRuntime } from "../../../sandbox/browser/runtime.js";
import { browserTools } from "../../../sandbox/browser/tools.js";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** A data dir, a SQLite store, a person, a browser runtime and its tools. */
export interface BrowserRig {
  dataDir: string;
  store: Store;
  personId: PersonId;
  egress: EgressGuard;
  runtime: BrowserRuntime;
  artifacts: ArtifactShelf;
  tools: Map<string, ToolDefinition>;
  /** Runs a tool directly (no Sentinel), validating arguments like the dispatcher. */
  run(name: string, args: unknown, context?: Partial<ToolContext>): Promise<ToolResult>;
  context(extra?: Partial<ToolContext>): ToolContext;
  close(): Promise<void>;
}

export async function browserRig(options: { allowed: string[]; resolve?: Resolver; dataDir?: string; idleMs?: number; maxContexts?: number; secretCheck?: (texts: readonly string[], origin: string) => string[] }): Promise<BrowserRig> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "familiar-browser-"));
  const store = openSqliteStore({ path: join(dataDir, "familiar.db") });
  const person = (await store.persons.listPersons({ limit: 1 })).items[0] ?? (await store.persons.createPerson({ displayName: "Ada" }));
  const egress = new EgressGuard({ privateHostsAllowed: options.allowed, ...(options.resolve && { resolve: options.resolve }) });
  const runtime = new BrowserRuntime({ chromiumPath: CHROMIUM, dataDir, egress, ...(options.secretCheck && { secretCheck: options.secretCheck }), idleMs: options.idleMs ?? 60_000, maxContexts: options.maxContexts ?? 4 });
  const artifacts = new ArtifactShelf({ dataDir, repository: store.artifacts, clock: systemClock });
  const tools = new Map(browserTools({ runtime, artifacts, dataDir }).map((t) => [t.name, t]));
  let step = 0;
  const context = (extra: Partial<ToolContext> = {}): ToolContext => ({
    personId: person.id,
    taskId: null,
    originMessageId: null,
    idempotencyKey: `act:${++step}:0`,
    now: new Date(),
    signal: new AbortController().signal,
    ...extra,
  });
  return {
    dataDir,
    store,
    personId: person.id,
    egress,
    runtime,
    artifacts,
    tools,
    context,
    async run(name, args, extra) {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.execute(tool.parameters.parse(args), context(extra));
    },
    async close() {
      await runtime.close();
      await store.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Grants a capability on a whole origin, for every browser tool and verb — broader than any card
 * offers (cards never widen a method or a write's path), as a test's starting point.
 */
export async function grantOrigin(rig: Pick<BrowserRig, "store" | "personId">, capability: string, origin: string, scope: GrantScope = { kind: "always" }): Promise<void> {
  const u = new URL(origin);
  const scheme = u.protocol === "https:" ? ("https" as const) : ("http" as const);
  const target = { kind: "url" as const, scheme, host: u.hostname, port: Number(u.port || (scheme === "https" ? 443 : 80)), path: "/", paths: "any" as const };
  for (const tool of ["browser_open", "browser_click", "browser_type", "browser_select", "browser_download", "browser_upload"]) {
    for (const method of ["GET", "POST", "CLICK", "TYPE", "SELECT", "DOWNLOAD", "UPLOAD"]) {
      await rig.store.grants.recordGrant({
        personId: rig.personId,
        capability,
        constraints: {},
        pattern: { v: 1, tool, capability, method, targets: [target], digest: null },
        scope,
        grantedBy: { channel: "local", accountId: "ada" },
        grantedAt: new Date(Date.now() - 1000),
      });
    }
  }
}

/** Ends every pending approval request (so one test's open cards do not count against the next's). */
export async function clearPendingApprovals(rig: Pick<BrowserRig, "store">): Promise<void> {
  await rig.store.approvals.expireApprovals(new Date(Date.now() + 365 * 86_400_000));
}
