/**
 * A Familiar process for the crash test: the normal app plus one side-effecting tool, `record_effect`,
 * whose effect is a line appended to a ledger file outside the store (the "outside world"). The test
 * kills this process at random points and counts how often each effect happened.
 */
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { loadConfig } from "../../core/config/load.js";
import { defineTool, type ToolDefinition } from "../../core/tools/tool.js";
import { startApp } from "../../main.js";

const ledger = process.env.CRASH_LEDGER;
if (!ledger) throw new Error("CRASH_LEDGER is required");

const recordEffect = defineTool({
  name: "record_effect",
  description: "Performs the side effect for a label.",
  parameters: z.object({ label: z.string() }),
  sideEffect: true,
  capability: "test.effect",
  async execute(args, ctx) {
    appendFileSync(ledger, `${JSON.stringify({ label: args.label, key: ctx.idempotencyKey, pid: process.pid })}\n`);
    // A little work after the effect, so some kills land between the effect and its journal outcome.
    await new Promise((r) => setTimeout(r, Math.random() * 40));
    return { ok: true, content: `effect ${args.label} recorded` };
  },
}) as unknown as ToolDefinition;

const app = await startApp(loadConfig(), { configure: (familiar) => familiar.addTools([recordEffect]) });
process.once("SIGTERM", () => void app.stop().then(() => process.exit(0)));
