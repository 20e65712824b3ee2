/**
 * A Familiar process for the soak: the normal app plus one side-effecting tool, `pay`, whose effect is
 * a line appended to a ledger file outside the store (the "outside service"). The soak kills this
 * process with SIGKILL at random moments and counts how often each payment reached the service.
 */
import { appendFileSync } from "node:fs";
import { z } from "zod";
import { loadConfig } from "../../core/config/load.js";
import { defineTool, type ToolDefinition } from "../../core/tools/tool.js";
import { startApp } from "../../app/index.js";

const ledger = process.env.SOAK_LEDGER;
if (!ledger) throw new Error("SOAK_LEDGER is required");

const pay = defineTool({
  name: "pay",
  description: "Pays the bill with the given label.",
  parameters: z.object({ label: z.string().min(1) }),
  sideEffect: true,
  capability: "test.payment",
  async execute(args, ctx) {
    // A little work before and after the effect, so kills land on either side of it.
    await new Promise((r) => setTimeout(r, Math.random() * 30));
    appendFileSync(ledger, `${JSON.stringify({ label: args.label, key: ctx.idempotencyKey, pid: process.pid, at: Date.now() })}\n`);
    await new Promise((r) => setTimeout(r, Math.random() * 30));
    return { ok: true, content: `payment ${args.label} made` };
  },
}) as unknown as ToolDefinition;

const app = await startApp(loadConfig(), { configure: (familiar) => familiar.addTools([pay]) });
process.once("SIGTERM", () => {
  app.stop().then(() => process.exit(0), () => process.exit(1));
});
