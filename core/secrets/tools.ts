/**
 * The model's way to the secret desk: the `request_secret` tool (the model asks the person for a
 * credential it needs; the link goes straight to the person, the model never sees it or the value).
 * The person's own way, the `/secret` command, is in core/inbound/secret-commands.ts.
 */
import { z } from "zod";
import type { Outbound } from "../outbox/index.js";
import { defineTool, type ToolDefinition } from "../tools/index.js";
import type { SecretDesk } from "./desk.js";

/** A secret's name: 1–64 letters, digits, `_`, `.` or `-`. */
export const SECRET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * `request_secret`: sends the person a one-time link to store a credential (name suggested by the
 * model) in their vault. Idempotent per tool call (the outbox delivery key is the call's key).
 */
export function secretTools(deps: { desk: SecretDesk; outbound: Pick<Outbound, "queue"> }): ToolDefinition[] {
  return [
    defineTool({
      name: "request_secret",
      description: "Ask the person for a password or API key via a one-time form link; then use {{secret:NAME}}.",
      parameters: z.object({ name: z.string().regex(SECRET_NAME), reason: z.string().max(300).optional() }),
      sideEffect: true,
      capability: "secrets.request",
      async execute(args, context) {
        const existing = deps.desk.list(context.personId);
        if (existing.some((s) => s.name === args.name)) {
          return { ok: true, content: `The person already has a secret ${args.name} (for ${existing.find((s) => s.name === args.name)!.origins.join(", ")}). Use {{secret:${args.name}}}.` };
        }
        const why = args.reason ? `${args.reason.trim()}\n` : "";
        const text = deps.desk.offerText(context.personId, args.name, why);
        await deps.outbound.queue({ personId: context.personId, deliveryKey: `secret-request:${context.idempotencyKey}`, text });
        const names = existing.map((s) => s.name);
        return {
          ok: true,
          content: `Sent the person a one-time link to store ${args.name}. The person is told when it is stored; then use {{secret:${args.name}}}.${names.length ? ` Secrets they already have: ${names.join(", ")}.` : ""}`,
        };
      },
    }),
  ];
}
