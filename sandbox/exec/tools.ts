/**
 * The computer's tools: `run_code {language, code, timeoutSeconds?}` and `run_command {command,
 * args[], timeoutSeconds?}`, each one run in a fresh bubblewrap sandbox over the person's
 * workspace (runner.ts). Offered only where the sandbox works; a call that comes anyway is refused
 * with the reason — nothing ever runs unsandboxed.
 *
 * What a run reads is the person's own computation, not content from outside — but taint
 * follows it: the result of a run in a tainted activation, or in a workspace holding files that
 * carry a taint, is untrusted content with that source, and the files the run created or changed
 * carry the taint (sandbox/workspace FileTaints). A run is a side effect (it changes files): it is
 * journalled, and one cut short by a crash is reported as interrupted, never run twice blindly.
 */
import { z } from "zod";
import type { PersonId } from "../../core/ids.js";
import { defineTool, type ToolContext, type ToolDefinition, type ToolResult } from "../../core/tools/index.js";
import { ARTIFACTS_FOLDER } from "../artifacts/index.js";
import { DEFAULT_QUOTA_BYTES, FileTaints, Workspace, type FileTaint, type WorkspaceOptions } from "../workspace/index.js";
import { formatResult } from "./format.js";
import type { Language } from "./host.js";
import { MAX_WALL_SECONDS, describeLimits } from "./limits.js";
import type { SandboxStatus } from "./probe.js";
import { ExecError, type ExecProgram, type SandboxRunner } from "./runner.js";

/** What the computer's tools need from the composition root. */
export interface ComputerToolsDeps {
  dataDir: string;
  workspace?: WorkspaceOptions;
  /** The sandbox's availability, known once the start-up probe finished (`detectSandbox`). */
  status: () => Promise<SandboxStatus>;
  /** The same, without waiting: null while the probe runs (tools are not offered meanwhile). */
  current: () => SandboxStatus | null;
}

const LANGUAGES = ["python", "javascript", "shell"] as const satisfies readonly Language[];

function description(kind: "code" | "command", runner: SandboxRunner | null, quotaBytes: number): string {
  const what =
    kind === "code"
      ? "Run Python 3, JavaScript (Node) or POSIX shell code on Familiar's own computer"
      : "Run one program with arguments (no shell: echo, sort, wc, python3 …) on Familiar's own computer";
  const limits = runner ? ` Limits: ${describeLimits(runner.limits, quotaBytes)}.` : "";
  return `${what}: a sandbox with the person's workspace at /workspace (read-write; /workspace/artifacts read-only) and nothing else. No network at all and no secrets: nothing can be downloaded or installed — only what Debian ships (python3 with its standard library, node, sh with coreutils). Files written in /workspace stay; /tmp is empty each run. Returns the exit status, the output (cut to fit) and the files created, changed or deleted.${limits}`;
}

/** The taint a run carries in: the activation's, else that of a file in the workspace (the program may read it). */
async function inputTaint(context: ToolContext, taints: FileTaints): Promise<FileTaint | null> {
  if (context.tainted) return { source: context.taintSource ?? "untrusted content in this activation" };
  const [first] = await taints.all();
  return first ? { source: first[0] === "*" ? first[1].source : `workspace file ${first[0]} (${first[1].source})` } : null;
}

const PROGRAM_OVER = "a program run over untrusted content (";

/** The untrusted source of a run's result: said once, however many runs in a row carried the taint on. */
function programSource(source: string): string {
  return source.startsWith(PROGRAM_OVER) ? source : `${PROGRAM_OVER}${source})`;
}

async function run(deps: ComputerToolsDeps, context: ToolContext, program: ExecProgram, timeoutSeconds?: number): Promise<ToolResult> {
  const status = await deps.status();
  if (!status.available) return { ok: false, code: "computer_unavailable", error: `Familiar's computer is off on this host: ${status.reason}. Nothing was run.` };
  const ws = Workspace.of(deps.dataDir, context.personId, deps.workspace);
  const taints = FileTaints.of(ws.root);
  const taint = await inputTaint(context, taints);
  let result;
  try {
    result = await status.runner.run({
      workspaceRoot: ws.root,
      quotaBytes: ws.quotaBytes,
      program,
      readOnlyFolder: ARTIFACTS_FOLDER,
      signal: context.signal,
      ...(timeoutSeconds !== undefined && { wallSeconds: timeoutSeconds }),
    });
  } catch (error) {
    if (error instanceof ExecError) return { ok: false, code: "computer_failed", error: `${error.message}. Nothing was run.` };
    throw error;
  }
  const written = [...result.files.created, ...result.files.changed].map((f) => f.path);
  await taints.update({ ...(taint && { mark: { paths: written, taint } }), gone: [...result.files.deleted, ...result.removedOverQuota, ...result.unlinked] });
  return {
    ok: true,
    content: formatResult(result),
    data: { outcome: result.outcome, exitCode: result.exitCode, signal: result.signal, limit: result.limit?.limit ?? null, refused: result.boundaries.map((b) => b.boundary) },
    ...(taint && { untrusted: { source: programSource(taint.source) } }),
  };
}

/** `run_code` and `run_command` (see the module comment). */
export function computerTools(deps: ComputerToolsDeps): ToolDefinition[] {
  const offered = () => deps.current()?.available === true;
  const runner = () => {
    const status = deps.current();
    return status?.available ? status.runner : null;
  };
  const quota = deps.workspace?.quotaBytes ?? DEFAULT_QUOTA_BYTES;
  const timeout = z.number().int().min(1).max(MAX_WALL_SECONDS).optional().describe(`wall time in seconds (default 30, at most ${MAX_WALL_SECONDS})`);
  const runCode = defineTool({
    name: "run_code",
    offered: (_personId: PersonId) => offered(),
    get description() {
      return description("code", runner(), quota);
    },
    parameters: z.object({ language: z.enum(LANGUAGES), code: z.string().min(1).max(200_000), timeoutSeconds: timeout }),
    sideEffect: true,
    capability: "computer.run",
    execute: (args, context) => run(deps, context, { kind: "code", language: args.language, code: args.code }, args.timeoutSeconds),
  });
  const runCommand = defineTool({
    name: "run_command",
    offered: (_personId: PersonId) => offered(),
    get description() {
      return description("command", runner(), quota);
    },
    parameters: z.object({
      command: z.string().min(1).max(200).refine((c) => !c.includes("\0"), "no NUL characters"),
      args: z.array(z.string().max(10_000).refine((a) => !a.includes("\0"), "no NUL characters")).max(200),
      timeoutSeconds: timeout,
    }),
    sideEffect: true,
    capability: "computer.run",
    execute: (args, context) => run(deps, context, { kind: "command", command: args.command, args: args.args }, args.timeoutSeconds),
  });
  return [runCode, runCommand];
}
