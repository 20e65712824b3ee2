/**
 * Organising mail: `email_move` (to a folder, or to the mailbox's Archive, Trash, Junk or back to
 * INBOX) and `email_flag` (read, flagged, answered). Both need the `organise` grant on the mailbox
 * and ask like any write unless a grant covers the exact call.
 */
import { z } from "zod";
import type { PersonId } from "../../../core/ids.js";
import { defineTool, type ToolDefinition } from "../../../core/tools/index.js";
import type { SpecialUse } from "../mailbox-client.js";
import { fail, isResult, mailFailure, messageFor, ok, type EmailToolDeps } from "./support.js";

const special: Record<string, SpecialUse> = { archive: "\\Archive", trash: "\\Trash", junk: "\\Junk" };

function moveTool(deps: EmailToolDeps): ToolDefinition {
  return defineTool({
    name: "email_move",
    description: "Move a mail (by id) to a folder, or to: archive, trash, junk, inbox.",
    parameters: z.object({ id: z.string().min(1).max(700), to: z.string().min(1).max(200).describe("archive, trash, junk, inbox, or a folder name") }),
    sideEffect: true,
    capability: "email.organise",
    policy: { capability: "email.organise", access: "write", method: { fixed: "MOVE" }, destinationArgs: [], exfiltrationArgs: [] },
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "organise"),
    async execute(args, ctx) {
      const target = await messageFor(deps, ctx.personId, "organise", args.id);
      if (isResult(target)) return target;
      try {
        const client = deps.service.client(target.account);
        const name = args.to.trim().toLowerCase();
        const use = special[name];
        const folder = name === "inbox" ? "INBOX" : use ? await client.specialFolder(use) : args.to.trim();
        if (!folder) return fail("not_found", `${target.account.connection.label} has no ${name} folder.`);
        await client.move(target.ref, folder);
        return ok(`Moved the mail to ${folder}.`);
      } catch (err) {
        return mailFailure(err);
      }
    },
  });
}

function flagTool(deps: EmailToolDeps): ToolDefinition {
  return defineTool({
    name: "email_flag",
    description: "Mark a mail (by id) read or unread, flagged or not, answered or not.",
    parameters: z
      .object({ id: z.string().min(1).max(700), read: z.boolean().optional(), flagged: z.boolean().optional(), answered: z.boolean().optional() })
      .refine((a) => a.read !== undefined || a.flagged !== undefined || a.answered !== undefined, "say at least one of read, flagged, answered"),
    sideEffect: true,
    capability: "email.organise",
    policy: { capability: "email.organise", access: "write", method: { fixed: "FLAG" }, destinationArgs: [], exfiltrationArgs: [] },
    offered: (pid: PersonId) => deps.connections.granted(pid, "email", "organise"),
    async execute(args, ctx) {
      const target = await messageFor(deps, ctx.personId, "organise", args.id);
      if (isResult(target)) return target;
      const add: string[] = [];
      const remove: string[] = [];
      for (const [on, flag] of [[args.read, "\\Seen"], [args.flagged, "\\Flagged"], [args.answered, "\\Answered"]] as const) {
        if (on === true) add.push(flag);
        if (on === false) remove.push(flag);
      }
      try {
        await deps.service.client(target.account).setFlags(target.ref, add, remove);
        return ok(`Flags set${add.length ? `: +${add.join(" +")}` : ""}${remove.length ? ` -${remove.join(" -")}` : ""}.`);
      } catch (err) {
        return mailFailure(err);
      }
    },
  });
}

/** The organising tools. */
export function organiseTools(deps: EmailToolDeps): ToolDefinition[] {
  return [moveTool(deps), flagTool(deps)];
}
